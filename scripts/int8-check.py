#!/usr/bin/python3
"""Done-when checks of `kiln quantize` (issue 13; figures in docs/int8.md).

  digits   the CNN trained on scikit-learn's digits (tests/driver/make_quantize_cases.py):
           test accuracy of f32 vs int8, int8 run by ONNX Runtime (the QDQ model as written) and by
           Kiln (when Kiln imports QDQ models), for each calibration method.
  resnet50, mobilenetv2, bert_encoder  (scripts/gen_test_models.py, random weights):
           quantized with 100 calibration inputs; int8 output cosine vs f32 on 10 other inputs
           (ONNX Runtime int8, the fake-quantized twin, Kiln int8 when it runs QDQ); the time of
           `kiln quantize`; ORT int8 vs Kiln int8 agreement.
           --accuracy adds, for the image models, the accuracy options (docs/int8.md "Accuracy"):
           --equalize, --bias-correction, --skip-sensitive N and their combinations.
           --variant "FLAGS" (repeatable) runs only the given `kiln quantize` flag sets instead
           (e.g. --variant "--skip-sensitive 16 --reduce-range --skip-op Add").
  prequantized  the pre-quantized models of tests/frontend/make_quant_cases.py (qdq_cnn, qlinear_conv,
           dynamic_conv_integer: DynamicQuantizeLinear + ConvInteger) compiled by Kiln and run by ONNX
           Runtime on their test input: largest difference and cosine, and each engine against the
           case's expected output (numpy evaluation of the ONNX definitions).
Inputs: images are smooth random fields (a 7x7 random grid upsampled to 224x224 plus fine noise,
normalized per channel to mean 0 / std 1, the statistics the random-weight models' batch norms
were recalibrated on); the encoder gets random token ids. Calibration and test inputs use
different seeds.

Usage: /usr/bin/python3 scripts/int8-check.py [--build build] [--work DIR] [--only NAME ...] [--accuracy]
       [--skip-sensitive N ...] [--variant "FLAGS" ...] [--no-fake-quant]
Needs ONNX Runtime for node (bash ../shared/peers/setup.sh) and the built `kiln`.
"""
import argparse
import os
import re
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s%s" % (" ".join(cmd), r.returncode, r.stdout[-3000:], r.stderr[-3000:]))
    return r.stdout


def cosine(a, b):
    a, b = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    return float(a @ b / np.sqrt((a @ a) * (b @ b)))


def min_sample_cosine(a, b):
    return min(cosine(x, y) for x, y in zip(a, b))


def ort(model, inputs, out):
    args = ["node", os.path.join(ROOT, "scripts", "ort_run_samples.js"), model, "--output", out]
    for k, v in inputs.items():
        args += ["--input", "%s=%s" % (k, v)]
    run(args)
    return np.load(out)


class Kiln:
    def __init__(self, build):
        self.exe = os.path.join(build, "bin", "kiln")

    def quantize(self, model, calib, out, extra=()):
        args = [self.exe, "quantize", model, "-o", out] + ["--calibration=%s" % c for c in calib] + list(extra)
        t0 = time.time()
        text = run(args)
        return time.time() - t0, text

    def run_samples(self, model, inputs, work, tag):
        """Compiles `model` and runs the samples (in one run when the model's batch is symbolic, else
        one run per sample); (None, error lines) when Kiln cannot compile it."""
        so = os.path.join(work, tag + ".so")
        arrays = {k: np.load(v) for k, v in inputs.items()}
        n = len(next(iter(arrays.values())))
        for batch in (n, 1):
            shapes = ["--input-shape=%s:%s" % (k, ",".join(str(d) for d in (batch,) + a.shape[1:])) for k, a in arrays.items()]
            try:
                run([self.exe, "compile", model, "-o", so] + shapes)
                break
            except RuntimeError as e:
                if batch == 1:
                    return None, str(e).splitlines()[-2:]
        outs = []
        for i in range(0, n, batch):
            args = [self.exe, "run", so, "--output", os.path.join(work, "kiln_out.npy")]
            for k, a in arrays.items():
                f = os.path.join(work, "kiln_in_%s.npy" % k)
                np.save(f, a[i:i + batch])
                args += ["--input", "%s=%s" % (k, f)]
            run(args)
            outs.append(np.load(os.path.join(work, "kiln_out.npy")))
        return np.concatenate(outs), None


def image_like(n, seed):
    rng = np.random.RandomState(seed)
    coarse = rng.randn(n, 3, 7, 7).astype(np.float32)
    idx = (np.arange(224) * 7 // 224)
    x = coarse[:, :, idx][:, :, :, idx] + 0.3 * rng.randn(n, 3, 224, 224).astype(np.float32)
    x = (x - x.mean(axis=(0, 2, 3), keepdims=True)) / x.std(axis=(0, 2, 3), keepdims=True)
    return x.astype(np.float32)


def check_digits(kiln, work, custom=()):
    cases = os.path.join(work, "quantize_cases")
    if not os.path.exists(os.path.join(cases, "digits.onnx")):
        run(["/usr/bin/python3", os.path.join(ROOT, "tests", "driver", "make_quantize_cases.py"), cases])
    model = os.path.join(cases, "digits.onnx")
    x, y = os.path.join(cases, "digits_test_x.npy"), np.load(os.path.join(cases, "digits_test_y.npy"))
    f32 = ort(model, {"image": x}, os.path.join(work, "digits_f32.npy"))
    acc = lambda o: 100.0 * float((o.argmax(1) == y).mean())
    print("digits: %d test images, f32 accuracy (ORT) %.2f%%" % (len(y), acc(f32)))
    variants = [("minmax", []), ("entropy", ["--method", "entropy"]), ("percentile", ["--method", "percentile"]),
                ("minmax --reduce-range", ["--reduce-range"])]
    if custom:
        variants = [("minmax " + flags, flags.split()) for flags in custom]
    for method, extra in variants:
        q = os.path.join(work, "digits.int8.onnx")
        secs, _ = kiln.quantize(model, [os.path.join(cases, "digits_calib.npy")], q, extra + ["--report-samples", "0"])
        i8 = ort(q, {"image": x}, os.path.join(work, "digits_int8.npy"))
        line = "  %-22s quantize %.1f s; int8 ORT accuracy %.2f%% (drop %+.2f), cosine to f32 %.4f" % (
            method, secs, acc(i8), acc(f32) - acc(i8), cosine(f32, i8))
        k, err = kiln.run_samples(q, {"image": x}, work, "digits_int8") if method.startswith("minmax") else (None, "skipped")
        if k is not None:
            line += "; Kiln int8 accuracy %.2f%%, cosine Kiln-ORT %.5f (min %.5f)" % (acc(k), cosine(k, i8),
                                                                                     min_sample_cosine(k, i8))
        elif method.startswith("minmax"):
            line += "; Kiln cannot run it yet: %s" % " ".join(err)
        print(line, flush=True)


def check_prequantized(kiln, work):
    import onnx
    from onnx import numpy_helper
    root = os.path.join(work, "onnx_quant")
    if not os.path.exists(os.path.join(root, "cases")):
        run(["/usr/bin/python3", os.path.join(ROOT, "tests", "frontend", "make_quant_cases.py"), root])
    for case in ("qdq_cnn", "qlinear_conv", "dynamic_conv_integer"):
        d = os.path.join(root, "cases", case)
        model = onnx.load(os.path.join(d, "model.onnx"))
        data = []
        for kind in ("input", "output"):
            t = onnx.TensorProto()
            with open(os.path.join(d, "test_data_set_0", kind + "_0.pb"), "rb") as f:
                t.ParseFromString(f.read())
            data.append(numpy_helper.to_array(t))
        x = os.path.join(work, case + "_x.npy")
        np.save(x, data[0])
        expected = data[1].astype(np.float64)  # numpy evaluation of the ONNX definitions
        inputs = {model.graph.input[0].name: x}
        o = ort(os.path.join(d, "model.onnx"), inputs, os.path.join(work, case + "_ort.npy"))
        k, err = kiln.run_samples(os.path.join(d, "model.onnx"), inputs, work, case)
        if k is None:
            print("%s: Kiln cannot run it: %s" % (case, " ".join(err)))
            continue
        print("%s (%s): Kiln vs ORT max |diff| %.3g (max |ORT| %.3g), cosine %.6f; against the ONNX definitions "
              "(numpy): Kiln max |diff| %.3g, ORT %.3g" % (
                  case, ", ".join(sorted({n.op_type for n in model.graph.node})), float(np.abs(k - o).max()),
                  float(np.abs(o).max()), cosine(k, o), float(np.abs(k - expected).max()), float(np.abs(o - expected).max())),
              flush=True)


def check_model(kiln, work, models, name, accuracy=False, sensitive=(), custom=(), fake_quant=True, n_calib=100,
                n_test=10):
    model = os.path.join(models, name + ".onnx")
    if name == "bert_encoder":
        inp = "input_ids"
        calib = np.random.RandomState(10).randint(0, 1000, (n_calib, 128)).astype(np.int64)
        test = np.random.RandomState(11).randint(0, 1000, (n_test, 128)).astype(np.int64)
    else:
        inp = "input"
        calib, test = image_like(n_calib, 10), image_like(n_test, 11)
    cf, tf = os.path.join(work, name + "_calib.npy"), os.path.join(work, name + "_test.npy")
    np.save(cf, calib)
    np.save(tf, test)
    f32 = ort(model, {inp: tf}, os.path.join(work, name + "_f32.npy"))
    variants = [("static minmax", [])]
    if name == "bert_encoder":
        variants += [("dynamic", ["--dynamic"])]
    else:
        variants += [("static --reduce-range", ["--reduce-range"])]
        if accuracy:
            variants += [("--equalize", ["--equalize"]), ("--bias-correction", ["--bias-correction"]),
                         ("--equalize --bias-correction", ["--equalize", "--bias-correction"])]
        for n in sensitive:
            variants += [("--skip-sensitive %d" % n, ["--skip-sensitive", str(n)]),
                         ("--skip-sensitive %d --reduce-range" % n, ["--skip-sensitive", str(n), "--reduce-range"])]
    if custom:
        variants = [(flags, flags.split()) for flags in custom]
    for label, extra in variants:
        tag = name + "." + (re.sub(r"[^A-Za-z0-9]+", "_", label).strip("_") or "minmax")
        q = os.path.join(work, tag + ".int8.onnx")  # each variant's model and `kiln quantize` log are kept
        fq = os.path.join(work, tag + ".fq.onnx")
        secs, text = kiln.quantize(model, ["%s=%s" % (inp, cf)], q, extra + (["--write-fake-quant", fq] if fake_quant else []))
        with open(os.path.join(work, tag + ".quantize.log"), "w") as f:
            f.write(text)
        i8 = ort(q, {inp: tf}, os.path.join(work, name + "_int8.npy"))
        line = ("%s %s: kiln quantize %.1f s (%d calibration inputs); on %d other inputs: cosine to f32: ORT int8 %.4f "
                "(min %.4f)" % (name, label, secs, n_calib, n_test, cosine(f32, i8), min_sample_cosine(f32, i8)))
        if fake_quant:
            fqo = ort(fq, {inp: tf}, os.path.join(work, name + "_fq.npy"))
            line += ", fake-quant %.4f (min %.4f)" % (cosine(f32, fqo), min_sample_cosine(f32, fqo))
        if "--equalize" not in label and "--bias-correction" not in label:
            k, err = kiln.run_samples(q, {inp: tf}, work, name + "_int8")
            if k is not None:
                line += "; Kiln int8 cosine to f32 %.4f (min %.4f), to ORT int8 %.5f (min %.5f)" % (
                    cosine(f32, k), min_sample_cosine(f32, k), cosine(k, i8), min_sample_cosine(k, i8))
            else:
                line += "; Kiln cannot run it yet: %s" % " ".join(err)
        print(line, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default="/tmp/kiln-int8-check")
    ap.add_argument("--only", nargs="*", default=["digits", "resnet50", "mobilenetv2", "bert_encoder"])
    ap.add_argument("--accuracy", action="store_true", help="also --equalize / --bias-correction variants")
    ap.add_argument("--skip-sensitive", nargs="*", type=int, default=[], help="also --skip-sensitive N variants")
    ap.add_argument("--variant", action="append", default=[], help="run only these `kiln quantize` flag sets (repeatable)")
    ap.add_argument("--no-fake-quant", action="store_true", help="skip the fake-quantized twin (faster)")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    kiln = Kiln(args.build)
    models = os.path.join(args.build, "models")
    for name in args.only:
        if name == "digits":
            check_digits(kiln, args.work, args.variant)
        elif name == "prequantized":
            check_prequantized(kiln, args.work)
        elif not os.path.exists(os.path.join(models, name + ".onnx")):
            print("%s: no %s/%s.onnx (run scripts/gen_test_models.py --out %s)" % (name, models, name, models))
        else:
            check_model(kiln, args.work, models, name, args.accuracy, args.skip_sensitive, args.variant, not args.no_fake_quant)
    return 0


if __name__ == "__main__":
    sys.exit(main())
