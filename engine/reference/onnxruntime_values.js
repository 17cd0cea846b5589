// `lathe compare --reference onnxruntime`: runs an ONNX model with ONNX Runtime (CPU, graph
// optimizations off, so that every node runs as written) and writes each output as .npy.
// Lathe embeds this file, writes it to a temporary folder and starts it:
//
//   node lathe_onnxruntime_values.js REQUEST.json
//
// REQUEST.json: {"model", "threads", "inputs": [{"name", "file"}], "outdir"}. Writes
// OUTDIR/outputs.json ([{"name", "file"}]) and one .npy file per output. Exit status 3:
// the npm package onnxruntime-node cannot be loaded.
'use strict';
const fs = require('fs');
const path = require('path');

let ort;
try {
  ort = require('onnxruntime-node');
} catch (e) {
  console.error(`cannot load onnxruntime-node: ${e.message}`);
  process.exit(3);
}

// .npy dtype -> [ONNX Runtime type, typed array]
const TYPES = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array],
  '<f2': ['float16', Uint16Array], '|i1': ['int8', Int8Array], '<i2': ['int16', Int16Array],
  '<i4': ['int32', Int32Array], '<i8': ['int64', BigInt64Array], '|u1': ['uint8', Uint8Array],
  '<u2': ['uint16', Uint16Array], '<u4': ['uint32', Uint32Array],
  '<u8': ['uint64', BigUint64Array], '|b1': ['bool', Uint8Array],
};

// A .npy file: magic, version, header length, a Python dict literal, then C-order data.
function readNpy(file, name) {
  const buf = fs.readFileSync(file);
  if (buf.readUInt8(0) !== 0x93 || buf.toString('latin1', 1, 6) !== 'NUMPY') {
    throw new Error(`input ${name}: not a .npy array`);
  }
  const major = buf.readUInt8(6);
  const headerLength = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLength);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',')
    .map(s => s.trim()).filter(s => s).map(Number);
  const kind = TYPES[descr];
  if (!kind) throw new Error(`input ${name}: dtype ${descr} is not supported`);
  const bytes = Uint8Array.from(buf.subarray(start + headerLength)); // aligned copy
  let data = new kind[1](bytes.buffer, 0, bytes.byteLength / kind[1].BYTES_PER_ELEMENT);
  if (kind[0] === 'bool') data = Array.from(data, v => v !== 0);
  return new ort.Tensor(kind[0], data, shape);
}

function writeNpy(file, name, tensor) {
  const descr = Object.keys(TYPES).find(d => TYPES[d][0] === tensor.type);
  if (!descr) throw new Error(`output ${name}: type ${tensor.type} is not supported`);
  const dims = tensor.dims.map(String);
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  header += ' '.repeat((64 - ((10 + header.length + 1) % 64)) % 64) + '\n';
  const prefix = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, 0, 0]);
  prefix.writeUInt16LE(header.length, 8);
  const data = tensor.type === 'bool'
    ? Buffer.from(Uint8Array.from(tensor.data, v => (v ? 1 : 0)))
    : Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
  fs.writeFileSync(file, Buffer.concat([prefix, Buffer.from(header, 'latin1'), data]));
}

async function main() {
  const request = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const feeds = {};
  for (const input of request.inputs) feeds[input.name] = readNpy(input.file, input.name);
  const options = {
    executionProviders: ['cpu'], graphOptimizationLevel: 'disabled',
    executionMode: 'sequential', interOpNumThreads: 1,
  };
  if (request.threads > 0) options.intraOpNumThreads = request.threads;
  const session = await ort.InferenceSession.create(request.model, options);
  const results = await session.run(feeds);
  const written = session.outputNames.map((name, i) => {
    const file = path.join(request.outdir, `out_${i}.npy`);
    writeNpy(file, name, results[name]);
    return { name, file };
  });
  fs.writeFileSync(path.join(request.outdir, 'outputs.json'), JSON.stringify(written));
}

main().catch(e => {
  console.error(e.message);
  process.exit(1);
});
