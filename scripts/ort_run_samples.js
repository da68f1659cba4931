// Runs an ONNX model in ONNX Runtime (node, onnxruntime-node from ../shared/peers/setup.sh) over
// many samples with ONE session: each --input file holds samples stacked on axis 0; slice i of
// every input (rows i*B .. i*B+B-1, B = the model's fixed batch, else 1) is one run; the first
// output of every run is stacked on axis 0 into --output. Used by scripts/int8-check.py.
// Usage: node ort_run_samples.js MODEL.onnx --input NAME=FILE.npy [...] --output OUT.npy [--threads N]
'use strict';
const fs = require('fs');
const path = require('path');

function loadOrt() {
  for (const d of [process.env.KILN_PEERS_DIR, '/tmp/kiln-peers'].filter(Boolean)) {
    try { return require(path.join(d, 'node_modules', 'onnxruntime-node')); } catch (e) { /* next */ }
  }
  console.error('error: onnxruntime-node not found: run ../shared/peers/setup.sh first');
  process.exit(2);
}

const TYPES = { '<f4': ['float32', Float32Array], '<i8': ['int64', BigInt64Array], '<i4': ['int32', Int32Array] };

function readNpy(file) {
  const b = fs.readFileSync(file);
  const major = b[6];
  const hlen = major === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8);
  const off = major === 1 ? 10 : 12;
  const header = b.toString('latin1', off, off + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').filter(s => s.trim()).map(Number);
  if (!TYPES[descr]) throw new Error(`${file}: dtype ${descr} not supported`);
  const [type, Arr] = TYPES[descr];
  const data = b.subarray(off + hlen);
  return { type, Arr, arr: new Arr(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength)), shape };
}

function writeNpy(file, data, dims) {
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${dims.join(', ')}${dims.length === 1 ? ',' : ''}), }`;
  header += ' '.repeat((64 - ((10 + header.length + 1) % 64)) % 64) + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1'); head[6] = 1; head[7] = 0; head.writeUInt16LE(header.length, 8);
  fs.writeFileSync(file, Buffer.concat([head, Buffer.from(header, 'latin1'), Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

async function main() {
  const argv = process.argv.slice(2);
  const ort = loadOrt();
  const inputs = {}; let output = null, threads = 1;
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i], v = argv[++i];
    if (a === '--input') { const k = v.indexOf('='); inputs[v.slice(0, k)] = readNpy(v.slice(k + 1)); }
    else if (a === '--output') output = v;
    else if (a === '--threads') threads = parseInt(v);
    else { console.error(`error: unknown option ${a}`); process.exit(2); }
  }
  const sess = await ort.InferenceSession.create(argv[0], { executionProviders: ['cpu'], intraOpNumThreads: threads,
    interOpNumThreads: 1, graphOptimizationLevel: 'all' });
  let runs = -1;
  const batch = {};
  for (const name of sess.inputNames) {
    const t = inputs[name];
    if (!t) { console.error(`error: no --input for ${name}`); process.exit(2); }
    const meta = (sess.inputMetadata || []).find(m => m.name === name);
    const d0 = meta && meta.shape && typeof meta.shape[0] === 'number' ? meta.shape[0] : 1;
    batch[name] = d0;
    const n = t.shape[0] / d0;
    if (runs >= 0 && n !== runs) { console.error('error: inputs have different sample counts'); process.exit(2); }
    runs = n;
  }
  const chunks = []; let outDims = null;
  for (let r = 0; r < runs; r++) {
    const feeds = {};
    for (const name of sess.inputNames) {
      const t = inputs[name], B = batch[name];
      const per = t.shape.slice(1).reduce((a, b) => a * b, 1) * B;
      feeds[name] = new ort.Tensor(t.type, t.arr.slice(r * per, (r + 1) * per), [B, ...t.shape.slice(1)]);
    }
    const out = (await sess.run(feeds))[sess.outputNames[0]];
    chunks.push(Float32Array.from(out.data)); outDims = out.dims;
  }
  const all = new Float32Array(chunks.reduce((a, c) => a + c.length, 0));
  let o = 0; for (const c of chunks) { all.set(c, o); o += c.length; }
  writeNpy(output, all, [runs * outDims[0], ...outDims.slice(1)]);
}
main().catch(e => { console.error(`error: ${e.message || e}`); process.exit(1); });
