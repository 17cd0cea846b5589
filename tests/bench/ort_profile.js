#!/usr/bin/env node
// ONNX Runtime's own per-node times (CPU EP, its profiler), to set beside `lathe run --profile`:
//   node ort_profile.js MODEL.onnx --threads N --repeat R
// Prints JSON lines {node, op, mean_ms, calls}, slowest first. Inputs as ort_time.js makes them.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const ort = require('onnxruntime-node');

const { openCpuSession, makeFeeds } = require('./ort_inputs.js');

async function main() {
  const args = process.argv.slice(2);
  const model = args[0];
  const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? Number(args[i + 1]) : dflt; };
  const threads = opt('--threads', 1), repeat = opt('--repeat', 20);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ort_profile_'));
  const session = await openCpuSession(ort, model, threads,
                                       { enableProfiling: true, profileFilePrefix: path.join(dir, 'ort') });
  const feeds = makeFeeds(ort, session);
  for (let i = 0; i < 3; i++) await session.run(feeds); // warm-up, left out below
  for (let i = 0; i < repeat; i++) await session.run(feeds);
  session.endProfiling();
  const file = fs.readdirSync(dir).map(f => path.join(dir, f)).find(f => f.endsWith('.json'));
  const events = JSON.parse(fs.readFileSync(file, 'utf8'));
  fs.rmSync(dir, { recursive: true, force: true });
  const byNode = new Map();
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time'))
      continue;
    const node = e.name.slice(0, -'_kernel_time'.length);
    const entry = byNode.get(node) || { node, op: (e.args && e.args.op_name) || '', times: [] };
    entry.times.push(e.dur / 1000);
    byNode.set(node, entry);
  }
  const rows = [];
  for (const { node, op, times } of byNode.values()) {
    const timed = times.slice(-repeat); // the warm-up runs come first
    rows.push({ node, op, mean_ms: timed.reduce((a, b) => a + b, 0) / timed.length, calls: timed.length });
  }
  rows.sort((a, b) => b.mean_ms - a.mean_ms);
  for (const r of rows)
    console.log(JSON.stringify(r));
}

main().catch(e => { console.error('ort_profile: ' + e.message); process.exit(1); });
