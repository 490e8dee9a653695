#!/usr/bin/env node
// sleapc against ONNX Runtime (CPU execution provider) on the benchmark networks, in one run:
// for each network and batch, ORT is timed in this process, then `sleapc bench --json` on the
// same network (random weights, same input size, threads and batch); the two alternate so that
// load from elsewhere falls on both. Prints a Markdown table: median times, time(ORT) /
// time(sleapc), GFLOP/s and the fraction of the FMA peak `sleapc bench` measured in that run.
//
// ONNX Runtime is a baseline, never a dependency of sleapc: install it outside the tree
// (npm install --ignore-scripts onnxruntime-node@1.30.0 in some folder) and point NODE_PATH
// at that folder's node_modules.
//
// node bench/ort_compare.js [--sleapc build/sleapc] [--data ../shared/data/bench_configs]
//                           [--batch 1,8] [--backend native,onednn] [--threads 2] [--runs 10]
//                           [--nets centroid,centered_instance,single_instance]
'use strict';
const { spawnSync } = require('child_process');
const path = require('path');

const NETS = {
  centroid: { config: 'config_centroid_unet.yaml', onnx: 'centroid_unet.onnx', size: 512 },
  centered_instance: {
    config: 'config_topdown_centered_instance_unet_medium_rf.yaml',
    onnx: 'centered_instance_unet_medium_rf.onnx', size: 192,
  },
  single_instance: {
    config: 'config_single_instance_unet_medium_rf.yaml',
    onnx: 'single_instance_unet_medium_rf.onnx', size: 1024,
  },
};

function parseArgs(argv) {
  const o = {
    sleapc: 'build/sleapc', data: '../shared/data/bench_configs', batch: '1,8',
    backend: 'native,onednn', threads: 2, runs: 10, nets: Object.keys(NETS).join(','),
  };
  for (let i = 2; i < argv.length; i += 2) {
    const k = argv[i].replace(/^--/, '');
    if (!(k in o) || i + 1 >= argv.length) throw new Error(`unknown or incomplete option ${argv[i]}`);
    o[k] = typeof o[k] === 'number' ? Number(argv[i + 1]) : argv[i + 1];
  }
  return o;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : 0.5 * (s[m - 1] + s[m]);
}

async function timeOrt(ort, session, batch, size, runs) {
  const n = batch * size * size;
  const x = new Float32Array(n);
  for (let i = 0; i < n; i++) x[i] = ((i * 2654435761) >>> 24) / 255;
  const feeds = { input: new ort.Tensor('float32', x, [batch, 1, size, size]) };
  for (let i = 0; i < 2; i++) await session.run(feeds);
  const ms = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return median(ms);
}

function timeSleapc(o, net, batch) {
  const args = ['bench', '--config', path.join(o.data, net.config), '--random-weights',
    '--size', `${net.size}x${net.size}`, '--backend', o.backend, '--batch', String(batch),
    '--threads', String(o.threads), '--runs', String(Math.max(o.runs, 10)), '--json'];
  const r = spawnSync(o.sleapc, args, { encoding: 'utf8', maxBuffer: 1 << 24 });
  if (r.status !== 0) throw new Error(`${o.sleapc} ${args.join(' ')}: ${r.stderr || r.error}`);
  const j = JSON.parse(r.stdout);
  let best = null;
  for (const res of j.results)
    if (res.ms_median && (!best || res.ms_median < best.ms_median)) best = res;
  if (!best) throw new Error(`sleapc bench ran no backend on ${net.config}`);
  return { ms: best.ms_median, backend: best.backend, gflop: j.gflop_per_frame * batch,
           peak: j.peak_gflops.fp32, all: j.results };
}

async function main() {
  const o = parseArgs(process.argv);
  let ort;
  try {
    ort = require('onnxruntime-node');
  } catch (e) {
    console.error('onnxruntime-node not found: install it outside the tree and set NODE_PATH ' +
                  '(see the header of this script)');
    process.exit(2);
  }
  const batches = o.batch.split(',').map(Number);
  const rows = [];
  for (const name of o.nets.split(',')) {
    const net = NETS[name];
    if (!net) throw new Error(`unknown network ${name}`);
    const session = await ort.InferenceSession.create(path.join(o.data, 'onnx', net.onnx), {
      executionProviders: ['cpu'], intraOpNumThreads: o.threads, interOpNumThreads: 1,
      executionMode: 'sequential', graphOptimizationLevel: 'all',
    });
    for (const b of batches) {
      const ortMs = await timeOrt(ort, session, b, net.size, o.runs);
      const s = timeSleapc(o, net, b);
      const others = s.all.filter((r) => r.ms_median && r !== s)
        .map((r) => `${r.backend} ${r.ms_median.toFixed(1)}`).join(', ');
      rows.push({ name, b, ortMs, s, others });
      console.error(`${name} batch ${b}: ORT ${ortMs.toFixed(1)} ms, sleapc ${s.backend} ` +
                    `${s.ms.toFixed(1)} ms (${others}), peak ${s.peak.toFixed(0)} GFLOP/s`);
    }
    await session.release?.();
  }
  console.log('| network (input) | batch | ORT ms | sleapc ms (backend) | ORT / sleapc | ' +
              'sleapc GFLOP/s | % peak | ORT GFLOP/s | % peak | peak GFLOP/s |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const { name, b, ortMs, s } of rows) {
    const gs = s.gflop / (s.ms * 1e-3), go = s.gflop / (ortMs * 1e-3);
    console.log(`| ${name} (${NETS[name].size}²) | ${b} | ${ortMs.toFixed(1)} | ` +
                `${s.ms.toFixed(1)} (${s.backend}) | ${(ortMs / s.ms).toFixed(2)} | ` +
                `${gs.toFixed(0)} | ${(100 * gs / s.peak).toFixed(0)}% | ${go.toFixed(0)} | ` +
                `${(100 * go / s.peak).toFixed(0)}% | ${s.peak.toFixed(0)} |`);
  }
}

main().catch((e) => {
  console.error(`ort_compare: ${e.message}`);
  process.exit(1);
});
