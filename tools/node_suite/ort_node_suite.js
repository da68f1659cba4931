// Runs ONNX's node tests (DIR/<test>/model.onnx + test_data_set_0/{input,output}_K.pb) through ONNX
// Runtime's CPU build (onnxruntime-node, from ../shared/peers/setup.sh) in ONE process, and compares
// every output with ONNX's rule: same number of outputs, same shape and element type,
// |actual - expected| <= atol + rtol * |expected| (rtol 1e-3, atol 1e-7; NaN equals NaN; integers,
// bools and strings exactly). The .pb files (onnx.TensorProto, SequenceProto, OptionalProto) are
// decoded by the small protobuf wire-format reader below.
//
// Usage: node ort_node_suite.js NODE_DIR OUT.tsv [--tests LIST_FILE] [--resume] [--current FILE]
//   Appends one line per test to OUT.tsv: test<TAB>pass|fail<TAB>reason. With --resume, tests
//   already in OUT.tsv are skipped (the driver script restarts this runner after a crash; --current
//   names a file that holds the test in progress, so the driver can record that one as a crash).
'use strict';
const fs = require('fs');
const path = require('path');

function loadOrt() {
  const dirs = [process.env.KILN_PEERS_DIR, '/tmp/kiln-peers'].filter(Boolean);
  for (const d of dirs) {
    try { return require(path.join(d, 'node_modules', 'onnxruntime-node')); } catch (e) { /* next */ }
  }
  console.error('error: onnxruntime-node not found: run ../shared/peers/setup.sh first');
  process.exit(2);
}

// ---- protobuf wire format ----
class Reader {
  constructor(buf) { this.buf = buf; this.pos = 0; }
  done() { return this.pos >= this.buf.length; }
  varint() {  // as BigInt (int64 values need all 64 bits)
    let result = 0n, shift = 0n;
    for (;;) {
      if (this.pos >= this.buf.length) throw new Error('truncated varint');
      const b = this.buf[this.pos++];
      result |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return result;
      shift += 7n;
    }
  }
  bytes() {
    const n = Number(this.varint());
    if (this.pos + n > this.buf.length) throw new Error('truncated field');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  // Yields [field number, wire type, value]: BigInt for varints, Buffer for the rest.
  *fields() {
    while (!this.done()) {
      const key = Number(this.varint());
      const field = key >>> 3, wt = key & 7;
      if (wt === 0) yield [field, wt, this.varint()];
      else if (wt === 1) { yield [field, wt, this.buf.subarray(this.pos, this.pos + 8)]; this.pos += 8; }
      else if (wt === 2) yield [field, wt, this.bytes()];
      else if (wt === 5) { yield [field, wt, this.buf.subarray(this.pos, this.pos + 4)]; this.pos += 4; }
      else throw new Error(`unsupported wire type ${wt}`);
    }
  }
}

// Repeated scalar field values, packed (wire type 2) or not.
function pushVarints(out, wt, v) {
  if (wt === 0) { out.push(v); return; }
  const r = new Reader(v);
  while (!r.done()) out.push(r.varint());
}
function pushFixed(out, wt, v, size, read) {
  for (let i = 0; i + size <= v.length; i += size) out.push(read(v, i));
}

const ONNX_TYPES = { 1: 'float32', 2: 'uint8', 3: 'int8', 4: 'uint16', 5: 'int16', 6: 'int32', 7: 'int64',
  8: 'string', 9: 'bool', 10: 'float16', 11: 'float64', 12: 'uint32', 13: 'uint64', 14: 'complex64',
  15: 'complex128', 16: 'bfloat16', 17: 'float8e4m3fn', 18: 'float8e4m3fnuz', 19: 'float8e5m2',
  20: 'float8e5m2fnuz', 21: 'uint4', 22: 'int4', 23: 'float4e2m1', 24: 'float8e8m0', 25: 'uint2', 26: 'int2' };
const TYPED = { float32: Float32Array, uint8: Uint8Array, int8: Int8Array, uint16: Uint16Array,
  int16: Int16Array, int32: Int32Array, int64: BigInt64Array, bool: Uint8Array, float16: Uint16Array,
  float64: Float64Array, uint32: Uint32Array, uint64: BigUint64Array, bfloat16: Uint16Array };

function decodeTensor(buf) {
  const t = { dims: [], dataType: 0, name: '', raw: null, floats: [], ints: [], strings: [], doubles: [],
    external: false };
  for (const [f, wt, v] of new Reader(buf).fields()) {
    if (f === 1) { const a = []; pushVarints(a, wt, v); for (const d of a) t.dims.push(Number(BigInt.asIntN(64, d))); }
    else if (f === 2) t.dataType = Number(v);
    else if (f === 4) pushFixed(t.floats, wt, v, 4, (b, i) => b.readFloatLE(i));
    else if (f === 5 || f === 7 || f === 11) pushVarints(t.ints, wt, v);
    else if (f === 6) t.strings.push(v.toString('utf8'));
    else if (f === 8) t.name = v.toString('utf8');
    else if (f === 9) t.raw = v;
    else if (f === 10) pushFixed(t.doubles, wt, v, 8, (b, i) => b.readDoubleLE(i));
    else if (f === 14) t.external = Number(v) === 1;
  }
  const type = ONNX_TYPES[t.dataType] || `onnx-type-${t.dataType}`;
  const n = t.dims.reduce((a, b) => a * b, 1);
  const tensor = { kind: 'tensor', name: t.name, type, dims: t.dims, data: null };
  if (t.external) throw new Error('external data is not supported');
  if (type === 'string') { tensor.data = t.strings; return tensor; }
  if (type === 'uint4' || type === 'int4') {  // two 4-bit values per byte
    tensor.data = t.raw ? Uint8Array.from(t.raw) : Uint8Array.from(t.ints, x => Number(BigInt.asUintN(8, x)));
    if (type === 'int4') tensor.data = new Int8Array(tensor.data.buffer);
    return tensor;
  }
  const Arr = TYPED[type];
  if (!Arr) { tensor.data = null; return tensor; }  // a type onnxruntime-node cannot hold
  if (t.raw) {
    const copy = Uint8Array.from(t.raw);  // aligned
    tensor.data = new Arr(copy.buffer, 0, n);
  } else if (type === 'float32') tensor.data = Float32Array.from(t.floats);
  else if (type === 'float64') tensor.data = Float64Array.from(t.doubles);
  else if (type === 'int64') tensor.data = BigInt64Array.from(t.ints, x => BigInt.asIntN(64, x));
  else if (type === 'uint64') tensor.data = BigUint64Array.from(t.ints, x => BigInt.asUintN(64, x));
  else tensor.data = Arr.from(t.ints, x => Number(BigInt.asIntN(64, x)));
  if (tensor.data.length !== n) throw new Error(`tensor '${t.name}' holds ${tensor.data.length} values for ${n} elements`);
  return tensor;
}

// SequenceProto (field 3: tensors) and OptionalProto (field 3: a tensor).
function decodeValue(buf, kind) {
  if (kind === 'tensor') return decodeTensor(buf);
  const out = { kind, elements: [] };
  for (const [f, , v] of new Reader(buf).fields()) {
    if (f === 1) out.name = v.toString('utf8');
    else if (f === 3) out.elements.push(decodeTensor(v));
    else if (f === 5 || f === 7) out.elements.push(decodeValue(v, f === 5 ? 'sequence' : 'optional'));
  }
  return out;
}

// ---- comparison ----
function halfToNumber(h) {
  const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}
function bf16ToNumber(h) { const b = new Float32Array(new Uint32Array([h << 16]).buffer); return b[0]; }
function valuesOf(type, data) {
  if (type === 'float16') return Array.from(data, h => (typeof h === 'number' && data instanceof Uint16Array) ? halfToNumber(h) : h);
  if (type === 'bfloat16') return Array.from(data, bf16ToNumber);
  return data;
}

function compareTensor(actual, expected, rtol, atol) {
  if (actual.type !== expected.type) return `type ${actual.type}, expected ${expected.type}`;
  const ad = Array.from(actual.dims), ed = expected.dims;
  if (ad.length !== ed.length || ad.some((d, i) => d !== ed[i])) return `shape [${ad}], expected [${ed}]`;
  const a = valuesOf(actual.type, actual.data), e = valuesOf(expected.type, expected.data);
  if (a.length !== e.length) return `${a.length} values, expected ${e.length}`;
  const isFloat = /^(float|bfloat)/.test(expected.type);
  for (let i = 0; i < e.length; i++) {
    const x = a[i], y = e[i];
    let ok;
    if (!isFloat) ok = x === y || (typeof x === 'bigint' || typeof y === 'bigint' ? BigInt(x) === BigInt(y) : false);
    else if (Number.isNaN(x) || Number.isNaN(y)) ok = Number.isNaN(x) && Number.isNaN(y);
    else if (!Number.isFinite(x) || !Number.isFinite(y)) ok = x === y;
    else ok = Math.abs(x - y) <= atol + rtol * Math.abs(y);
    if (!ok) return `element ${i}: actual ${x}, expected ${y} (rtol ${rtol}, atol ${atol})`;
  }
  return null;
}

function numbered(dir, prefix) {
  const out = [];
  for (let k = 0; fs.existsSync(path.join(dir, `${prefix}_${k}.pb`)); k++) out.push(path.join(dir, `${prefix}_${k}.pb`));
  return out;
}

function clean(s) { return String(s).replace(/[\t\r\n]+/g, ' ').slice(0, 400); }

async function runTest(ort, dir, kinds) {
  const setDir = path.join(dir, 'test_data_set_0');
  const inputs = numbered(setDir, 'input').map((f, i) => decodeValue(fs.readFileSync(f), kinds.inputs[i] || 'tensor'));
  const expected = numbered(setDir, 'output').map((f, i) => decodeValue(fs.readFileSync(f), kinds.outputs[i] || 'tensor'));
  let sess;
  try {
    sess = await ort.InferenceSession.create(path.join(dir, 'model.onnx'), { executionProviders: ['cpu'],
      intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all' });
  } catch (e) { return `session: ${e.message || e}`; }
  const feeds = {};
  for (let i = 0; i < inputs.length && i < sess.inputNames.length; i++) {
    let v = inputs[i];
    if (v.kind === 'optional' && v.elements.length === 1 && v.elements[0].kind === 'tensor') v = v.elements[0];
    if (v.kind !== 'tensor') return `input ${i} is a ${v.kind}: onnxruntime-node takes tensors only`;
    if (!v.data) return `input ${i} has element type ${v.type}, which onnxruntime-node cannot hold`;
    if (v.type === 'bfloat16') return `input ${i} has element type bfloat16, which onnxruntime-node cannot hold`;
    feeds[sess.inputNames[i]] = new ort.Tensor(v.type, v.data, v.dims);
  }
  let out;
  try { out = await sess.run(feeds); } catch (e) { return `run: ${e.message || e}`; }
  if (sess.outputNames.length !== expected.length) {
    return `model has ${sess.outputNames.length} outputs, the test expects ${expected.length}`;
  }
  for (let j = 0; j < expected.length; j++) {
    let e = expected[j];
    if (e.kind === 'optional' && e.elements.length === 1) e = e.elements[0];
    if (e.kind !== 'tensor') return `output ${j} is a ${e.kind}: onnxruntime-node returns tensors only`;
    if (!e.data) return `output ${j} has element type ${e.type}, which this runner cannot compare`;
    const a = out[sess.outputNames[j]];
    if (!a) return `output ${j} ('${sess.outputNames[j]}') missing`;
    const why = compareTensor({ type: a.type, dims: a.dims, data: a.data }, e, 1e-3, 1e-7);
    if (why) return `output ${j} ('${sess.outputNames[j]}'): ${why}`;
  }
  return null;
}

async function main() {
  const argv = process.argv.slice(2);
  if (argv.length < 2) {
    console.error('usage: node ort_node_suite.js NODE_DIR OUT.tsv [--tests LIST_FILE] [--resume] [--current FILE]');
    process.exit(2);
  }
  const [nodeDir, outFile] = argv;
  let listFile = null, resume = false, current = null;
  for (let i = 2; i < argv.length; i++) {
    if (argv[i] === '--tests') listFile = argv[++i];
    else if (argv[i] === '--resume') resume = true;
    else if (argv[i] === '--current') current = argv[++i];
    else { console.error(`error: unknown option ${argv[i]}`); process.exit(2); }
  }
  const ort = loadOrt();
  ort.env.logLevel = 'fatal';
  // Input/output kinds (tensor/sequence/optional) from index.tsv beside NODE_DIR.
  const kindsOf = {};
  const index = path.join(nodeDir, '..', 'index.tsv');
  if (fs.existsSync(index)) {
    const lines = fs.readFileSync(index, 'utf8').split('\n');
    const head = lines[0].split('\t');
    const ii = head.indexOf('input_kinds'), oi = head.indexOf('output_kinds');
    for (const l of lines.slice(1)) {
      const c = l.split('\t');
      if (c.length > oi) kindsOf[c[0]] = { inputs: c[ii].split(','), outputs: c[oi].split(',') };
    }
  }
  let tests = listFile ? fs.readFileSync(listFile, 'utf8').split('\n').filter(Boolean)
    : fs.readdirSync(nodeDir).filter(d => fs.existsSync(path.join(nodeDir, d, 'model.onnx'))).sort();
  const done = new Set();
  if (resume && fs.existsSync(outFile)) {
    for (const l of fs.readFileSync(outFile, 'utf8').split('\n')) if (l) done.add(l.split('\t')[0]);
  } else fs.writeFileSync(outFile, '');
  for (const t of tests) {
    if (done.has(t)) continue;
    if (current) fs.writeFileSync(current, t);
    let why;
    try { why = await runTest(ort, path.join(nodeDir, t), kindsOf[t] || { inputs: [], outputs: [] }); }
    catch (e) { why = `runner: ${e.message || e}`; }
    fs.appendFileSync(outFile, `${t}\t${why ? 'fail' : 'pass'}\t${why ? clean(why) : ''}\n`);
  }
  if (current) fs.writeFileSync(current, '');
}
main().catch(e => { console.error(`error: ${e.stack || e}`); process.exit(1); });
