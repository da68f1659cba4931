// Runs an ONNX model in ONNX Runtime (node, onnxruntime-node from ../shared/peers/setup.sh) over
// many samples with ONE session: each --input file holds samples stacked on axis 0; slice i of
// every input (rows i*B .. i*B+B-1, B = the model's fixed batch, else 1) is one run; the first
// output of every run is stacked on axis 0 into --output; --output-dir DIR stacks every output the
// same way into DIR/<name>.npy (the name with characters other than [A-Za-z0-9_.-] as '_', as
// `kiln run --output-dir` writes them; float32, int8, uint8, int32, int64 kept as they are).
// Used by scripts/int8-check.py and scripts/int8-layer-diff.py.
// Usage: node ort_run_samples.js MODEL.onnx --input NAME=FILE.npy [...] (--output OUT.npy | --output-dir DIR)
//        [--threads N]
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

const TYPES = { '<f4': ['float32', Float32Array], '<i8': ['int64', BigInt64Array], '<i4': ['int32', Int32Array],
  '|u1': ['uint8', Uint8Array], '|i1': ['int8', Int8Array] };

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

const DESCR = { float32: '<f4', int8: '|i1', uint8: '|u1', int32: '<i4', int64: '<i8' };

function fileNameFor(name) {
  const out = name.replace(/[^A-Za-z0-9_.-]/g, '_');
  return (out === '' || out[0] === '.' ? '_' + out : out) + '.npy';
}

function writeNpy(file, data, dims, type = 'float32') {
  if (!DESCR[type]) throw new Error(`output ${file}: type ${type} not supported`);
  let header = `{'descr': '${DESCR[type]}', 'fortran_order': False, 'shape': (${dims.join(', ')}${dims.length === 1 ? ',' : ''}), }`;
  header += ' '.repeat((64 - ((10 + header.length + 1) % 64)) % 64) + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1'); head[6] = 1; head[7] = 0; head.writeUInt16LE(header.length, 8);
  fs.writeFileSync(file, Buffer.concat([head, Buffer.from(header, 'latin1'), Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

async function main() {
  const argv = process.argv.slice(2);
  const ort = loadOrt();
  const inputs = {}; let output = null, outputDir = null, threads = 1;
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i], v = argv[++i];
    if (a === '--input') { const k = v.indexOf('='); inputs[v.slice(0, k)] = readNpy(v.slice(k + 1)); }
    else if (a === '--output') output = v;
    else if (a === '--output-dir') outputDir = v;
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
  if (!output && !outputDir) { console.error('error: no --output or --output-dir'); process.exit(2); }
  const names = outputDir ? sess.outputNames : [sess.outputNames[0]];
  const chunks = {}, dims = {}, types = {};
  for (const n of names) chunks[n] = [];
  for (let r = 0; r < runs; r++) {
    const feeds = {};
    for (const name of sess.inputNames) {
      const t = inputs[name], B = batch[name];
      const per = t.shape.slice(1).reduce((a, b) => a * b, 1) * B;
      feeds[name] = new ort.Tensor(t.type, t.arr.slice(r * per, (r + 1) * per), [B, ...t.shape.slice(1)]);
    }
    const outs = await sess.run(feeds);
    for (const n of names) { chunks[n].push(outs[n].data); dims[n] = outs[n].dims; types[n] = outs[n].type; }
  }
  const stack = (n) => {
    const all = new chunks[n][0].constructor(chunks[n].reduce((a, c) => a + c.length, 0));
    let o = 0; for (const c of chunks[n]) { all.set(c, o); o += c.length; }
    const d = dims[n].length ? [runs * dims[n][0], ...dims[n].slice(1)] : [runs];
    return [all, d];
  };
  if (output) {
    const n = sess.outputNames[0];
    const [all, d] = stack(n);
    writeNpy(output, Float32Array.from(all), d);
  }
  if (outputDir) {
    fs.mkdirSync(outputDir, { recursive: true });
    for (const n of names) { const [all, d] = stack(n); writeNpy(path.join(outputDir, fileNameFor(n)), all, d, types[n]); }
  }
}
main().catch(e => { console.error(`error: ${e.message || e}`); process.exit(1); });
