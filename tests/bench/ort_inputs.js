// The inputs both ONNX Runtime timers (ort_time.js: onnxruntime-node, ort_web_time.js:
// onnxruntime-web) feed a model: floats uniform in [-1, 1), integers 0/1, booleans false,
// symbolic dims 1, from the same seeded generator, so that the two time the same work.
'use strict';

const ARRAYS = { float32: Float32Array, float64: Float64Array, int64: BigInt64Array, int32: Int32Array,
                 bool: Uint8Array, uint8: Uint8Array, int8: Int8Array };

// A linear congruential generator in [0, 1), the same sequence in every run.
function seededRandom(seed = 12345) {
  return () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
}

// A tensor of ort's Tensor class for an input's metadata ({name, type, shape}).
function makeTensor(ort, meta, random) {
  const dims = meta.shape.map(d => (typeof d === 'number' && d > 0 ? d : 1));
  const n = dims.reduce((a, b) => a * b, 1);
  const Type = ARRAYS[meta.type];
  if (!Type) throw new Error(`input ${meta.name}: type ${meta.type} is not supported`);
  const data = new Type(n);
  for (let i = 0; i < n; i++) {
    if (meta.type === 'int64') data[i] = BigInt(Math.floor(random() * 2));
    else if (meta.type.startsWith('float')) data[i] = random() * 2 - 1;
    else if (meta.type !== 'bool') data[i] = Math.floor(random() * 2);
  }
  return new ort.Tensor(meta.type, meta.type === 'bool' ? Array.from(data, v => v !== 0) : data, dims);
}

// An onnxruntime-node CPU session as both timers of onnxruntime-node open it (all graph
// optimisations, `threads` intra-op threads, sequential), with `extra` options (profiling).
function openCpuSession(ort, model, threads, extra = {}) {
  return ort.InferenceSession.create(model, {
    executionProviders: ['cpu'], intraOpNumThreads: threads, interOpNumThreads: 1,
    graphOptimizationLevel: 'all', executionMode: 'sequential', ...extra,
  });
}

// Seeded inputs for every input of a session.
function makeFeeds(ort, session) {
  const random = seededRandom();
  const feeds = {};
  for (const name of session.inputNames) {
    const meta = session.inputMetadata.find ? session.inputMetadata.find(m => m.name === name) : null;
    if (!meta) throw new Error('no input metadata for ' + name);
    feeds[name] = makeTensor(ort, meta, random);
  }
  return feeds;
}

module.exports = { ARRAYS, seededRandom, makeTensor, openCpuSession, makeFeeds };
