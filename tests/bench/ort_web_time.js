#!/usr/bin/env node
// Times onnxruntime-web's WebAssembly backend in Node on one model, on one thread:
// prints JSON {median_ms, mean_ms, min_ms, runs, backend, threads, simd, version, wasm}.
//   NODE_PATH=DIR/node_modules node ort_web_time.js MODEL.onnx [--repeat R] [--warmup W]
//       [--input FILE.npy ...] [--outputs DIR]
// Inputs: without --input, generated as tests/bench/ort_time.js does (floats uniform in
// [-1, 1), integers 0/1, booleans false; symbolic dims become 1); with it, one .npy per model
// input in the model's order. --outputs writes the last run's outputs there as output_<i>.npy
// in the model's output order (the names main.js of a wasm export writes).
// The .wasm file is taken from onnxruntime-web's own dist/ (ort.env.wasm.wasmPaths), the
// worker proxy is off, and numThreads = 1 keeps it on this thread: no pthread workers.
// Run it under `node --no-liftoff` (tests/bench/compare_wasm.py does) for the optimised code's
// time: with V8's default tiering, the few warm-up runs can leave parts of the module unoptimised.
'use strict';
const fs = require('fs');
const path = require('path');
const url = require('url');
const ort = require('onnxruntime-web');

const { ARRAYS, seededRandom, makeTensor } = require('./ort_inputs.js');
// .npy dtype (without its byte-order mark) of each ONNX Runtime tensor type.
const NPY = { float32: 'f4', float64: 'f8', int64: 'i8', int32: 'i4', bool: 'b1', uint8: 'u1',
              int8: 'i1' };

// One .npy file (format 1.0 to 3.0, little-endian, C order) as a tensor of the input's type.
function readNpy(file, meta) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${file}: not an .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const bodyStart = (major === 1 ? 10 : 12) + headerLen;
  const header = buf.toString('latin1', major === 1 ? 10 : 12, bodyStart);
  const descr = header.match(/'descr':\s*'([<>|=])([a-z]\d+)'/);
  const shape = header.match(/'shape':\s*\(([^)]*)\)/);
  if (!descr || !shape || /'fortran_order':\s*True/.test(header) || descr[1] === '>')
    throw new Error(`${file}: only little-endian C-ordered arrays are read`);
  if (descr[2] !== NPY[meta.type])
    throw new Error(`${file}: dtype ${descr[2]}, input ${meta.name} is ${meta.type}`);
  const dims = shape[1].split(',').map(s => s.trim()).filter(s => s.length).map(Number);
  const Type = ARRAYS[meta.type];
  const n = dims.reduce((a, b) => a * b, 1);
  // A copy: the body need not be aligned for the typed array.
  const bytes = Uint8Array.prototype.slice.call(buf, bodyStart, bodyStart + n * Type.BYTES_PER_ELEMENT);
  const data = new Type(bytes.buffer, 0, n);
  return new ort.Tensor(meta.type, meta.type === 'bool' ? Array.from(data, v => v !== 0) : data, dims);
}

function writeNpy(file, tensor) {
  const code = NPY[tensor.type];
  if (!code) throw new Error(`output type ${tensor.type} cannot be written`);
  const data = tensor.type === 'bool' ? Uint8Array.from(tensor.data, v => (v ? 1 : 0)) : tensor.data;
  const dims = tensor.dims.map(d => `${d},`).join(' ');
  let header = `{'descr': '${code.endsWith('1') ? '|' : '<'}${code}', ` +
               `'fortran_order': False, 'shape': (${dims}), }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n'; // body 64-byte aligned
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head.writeUInt16LE(header.length, 8);
  fs.writeFileSync(file, Buffer.concat([head, Buffer.from(header, 'latin1'),
                                        Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

async function main() {
  const args = process.argv.slice(2);
  const model = args[0];
  if (!model || model.startsWith('-'))
    throw new Error('usage: ort_web_time.js MODEL.onnx [--repeat R] [--warmup W] [--input FILE.npy ...] [--outputs DIR]');
  const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? Number(args[i + 1]) : dflt; };
  const repeat = opt('--repeat', 20), warmup = opt('--warmup', 3);
  const inputFiles = args.flatMap((a, i) => (a === '--input' ? [args[i + 1]] : []));
  const outIndex = args.indexOf('--outputs');
  const outDir = outIndex >= 0 ? args[outIndex + 1] : null;

  // The package's own .wasm, next to the JavaScript Node loaded.
  const dist = path.dirname(require.resolve('onnxruntime-web'));
  const wasmFile = path.join(dist, 'ort-wasm-simd-threaded.wasm');
  if (!fs.existsSync(wasmFile)) throw new Error(`${wasmFile} is missing`);
  ort.env.wasm.wasmPaths = url.pathToFileURL(dist).href + '/';
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.simd = true;
  ort.env.wasm.proxy = false;
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['wasm'], graphOptimizationLevel: 'all', executionMode: 'sequential',
  });
  const random = seededRandom();
  if (inputFiles.length && inputFiles.length !== session.inputNames.length)
    throw new Error(`give all ${session.inputNames.length} inputs with --input or none`);
  const feeds = {};
  session.inputNames.forEach((name, i) => {
    const meta = session.inputMetadata.find(m => m.name === name);
    if (!meta) throw new Error('no input metadata for ' + name);
    feeds[name] = inputFiles.length ? readNpy(inputFiles[i], meta) : makeTensor(ort, meta, random);
  });
  let results = null;
  for (let i = 0; i < warmup; i++) results = await session.run(feeds);
  const times = [];
  for (let i = 0; i < repeat; i++) {
    const t0 = process.hrtime.bigint();
    results = await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  if (outDir && results) {
    fs.mkdirSync(outDir, { recursive: true });
    session.outputNames.forEach((name, o) => writeNpy(path.join(outDir, `output_${o}.npy`), results[name]));
  }
  await session.release();
  times.sort((a, b) => a - b);
  const median = times.length % 2 ? times[(times.length - 1) / 2]
                                   : (times[times.length / 2 - 1] + times[times.length / 2]) / 2;
  console.log(JSON.stringify({ median_ms: median, mean_ms: times.reduce((a, b) => a + b, 0) / times.length,
                               min_ms: times[0], runs: times.length, backend: 'wasm',
                               threads: ort.env.wasm.numThreads, simd: ort.env.wasm.simd,
                               version: ort.env.versions.web, wasm: wasmFile }));
}

main().catch(e => { console.error('ort_web_time: ' + (e && e.message || e)); process.exit(1); });
