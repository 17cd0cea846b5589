#!/usr/bin/env node
// Runs an ONNX model with ONNX Runtime (CPU) on inputs from a .npz file and writes each
// output as OUTDIR/<index>.bin (raw little-endian) plus OUTDIR/outputs.json (name, type,
// dims). Lathe's tests compare these with `lathe run --outputs`.
//
//   node ort_run.js MODEL.onnx INPUTS.npz OUTDIR [--threads N]
'use strict';
const fs = require('fs');
const path = require('path');
const AdmZip = require('adm-zip');
const ort = require('onnxruntime-node');

const NPY_TYPES = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array], '<i8': ['int64', BigInt64Array],
  '<i4': ['int32', Int32Array], '|b1': ['bool', Uint8Array], '|u1': ['uint8', Uint8Array],
  '|i1': ['int8', Int8Array], '<f2': ['float16', Uint16Array],
};

// A .npy file: magic, version, header length, a Python dict literal, then the data.
function parseNpy(buf, name) {
  if (buf.readUInt8(0) !== 0x93 || buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(`${name}: not a .npy array`);
  const major = buf.readUInt8(6);
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12);
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${name}: Fortran order`);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map(s => s.trim()).filter(s => s).map(Number);
  const kind = NPY_TYPES[descr];
  if (!kind) throw new Error(`${name}: unsupported dtype ${descr}`);
  const data = buf.subarray(start + headerLen);
  const copy = Uint8Array.from(data); // aligned copy
  let array = new kind[1](copy.buffer, 0, copy.byteLength / kind[1].BYTES_PER_ELEMENT);
  if (kind[0] === 'bool') array = Array.from(array, v => v !== 0);
  return new ort.Tensor(kind[0], array, shape);
}

// Runs MODEL on the arrays of INPUTS (.npz) and writes OUTDIR/<index>.bin + outputs.json.
async function runModel(model, inputs, outDir, threads) {
  const feeds = {};
  for (const entry of new AdmZip(inputs).getEntries()) {
    const name = entry.entryName.replace(/\.npy$/, '');
    feeds[name] = parseNpy(entry.getData(), name);
  }
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'], intraOpNumThreads: threads, interOpNumThreads: 1,
    graphOptimizationLevel: 'all', executionMode: 'sequential',
  });
  const results = await session.run(feeds);
  fs.mkdirSync(outDir, { recursive: true });
  const meta = [];
  session.outputNames.forEach((name, i) => {
    const t = results[name];
    let bytes;
    if (t.type === 'bool') bytes = Buffer.from(Uint8Array.from(t.data, v => (v ? 1 : 0)));
    else bytes = Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
    fs.writeFileSync(path.join(outDir, `${i}.bin`), bytes);
    meta.push({ name, type: t.type, dims: t.dims });
  });
  fs.writeFileSync(path.join(outDir, 'outputs.json'), JSON.stringify(meta));
}

async function main() {
  const [model, inputs, outDir, ...rest] = process.argv.slice(2);
  if (!outDir) throw new Error('usage: node ort_run.js MODEL.onnx INPUTS.npz OUTDIR [--threads N]');
  const threads = rest[0] === '--threads' ? Number(rest[1]) : 1;
  await runModel(model, inputs, outDir, threads);
}

module.exports = { parseNpy, runModel };

if (require.main === module)
  main().catch(e => { console.error(`ort_run: ${e.message}`); process.exit(1); });
