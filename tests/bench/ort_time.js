#!/usr/bin/env node
// Times ONNX Runtime (CPU EP) on one model: prints JSON {median_ms, mean_ms, min_ms, runs}.
//   node ort_time.js MODEL.onnx --threads N --repeat R
// Inputs: floats uniform in [-1, 1), integers 0/1, booleans false; symbolic dims become 1.
'use strict';
const ort = require('onnxruntime-node');

const { openCpuSession, makeFeeds } = require('./ort_inputs.js');

async function main() {
  const args = process.argv.slice(2);
  const model = args[0];
  const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? Number(args[i + 1]) : dflt; };
  const threads = opt('--threads', 1), repeat = opt('--repeat', 20);
  const session = await openCpuSession(ort, model, threads);
  const feeds = makeFeeds(ort, session);
  for (let i = 0; i < 3; i++) await session.run(feeds); // warm-up
  const times = [];
  for (let i = 0; i < repeat; i++) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  const median = times.length % 2 ? times[(times.length - 1) / 2]
                                   : (times[times.length / 2 - 1] + times[times.length / 2]) / 2;
  console.log(JSON.stringify({ median_ms: median, mean_ms: times.reduce((a, b) => a + b, 0) / times.length,
                               min_ms: times[0], runs: times.length }));
}

main().catch(e => { console.error('ort_time: ' + e.message); process.exit(1); });
