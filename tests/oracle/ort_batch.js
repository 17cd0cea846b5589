#!/usr/bin/env node
// Runs many small models with ONNX Runtime in one process (session start-up is what costs),
// each as ort_run.js would: JOBS.json is a list of {model, inputs, out}; every job writes
// OUT/<index>.bin + OUT/outputs.json, or OUT/error.txt with ONNX Runtime's message when
// it rejects the model or fails to run it. Exit 0 unless JOBS.json cannot be read.
//
//   node ort_batch.js JOBS.json [--threads N]
'use strict';
const fs = require('fs');
const path = require('path');
const { runModel } = require('./ort_run.js');

async function main() {
  const [jobsFile, ...rest] = process.argv.slice(2);
  if (!jobsFile) throw new Error('usage: node ort_batch.js JOBS.json [--threads N]');
  const threads = rest[0] === '--threads' ? Number(rest[1]) : 1;
  for (const job of JSON.parse(fs.readFileSync(jobsFile, 'utf8'))) {
    try {
      await runModel(job.model, job.inputs, job.out, threads);
    } catch (e) {
      fs.mkdirSync(job.out, { recursive: true });
      fs.writeFileSync(path.join(job.out, 'error.txt'), String(e && e.message ? e.message : e));
    }
  }
}

main().catch(e => { console.error(`ort_batch: ${e.message}`); process.exit(1); });
