// Loads a moesim Chrome trace in Chrome DevTools' trace engine (the parser of its Performance
// panel, npm @paulirish/trace_engine) and checks that the engine's model is the file's: every
// GPU process and stream thread named as the metadata names them, every op on its thread, and
// every flow bound to its ops. Usage: node check.mjs VIEWER_DIR TRACE.json
// Prints one line of counts; exits 1 with the first difference, 2 for bad usage.
import fs from 'node:fs';
import path from 'node:path';
import {pathToFileURL} from 'node:url';

const [dir, file] = process.argv.slice(2);
if (!dir || !file) {
  console.error('usage: node check.mjs VIEWER_DIR TRACE.json|--probe');
  process.exit(2);
}
const engine = path.join(dir, 'node_modules', '@paulirish', 'trace_engine');
// The engine expects a browser's DOMRect; its package ships a polyfill for Node. --probe: exit 0
// when the engine loads in this Node.js, 77 when it does not (the test is then skipped).
let Trace;
try {
  const {polyfillDOMRect} = await import(pathToFileURL(path.join(engine, 'analyze-trace.mjs')));
  Trace = await import(pathToFileURL(path.join(engine, 'models', 'trace', 'trace.js')));
  polyfillDOMRect();
} catch (e) {
  console.error(`the trace engine in ${engine} does not load in Node.js ${process.version}: ${e}`);
  process.exit(file === '--probe' ? 77 : 1);
}
if (file === '--probe') {
  process.exit(0);
}

function fail(message) {
  console.error(`${file}: ${message}`);
  process.exit(1);
}

// JSON.parse is strict: a name written without its escapes fails here already.
const json = JSON.parse(fs.readFileSync(file, 'utf8'));
const events = json.traceEvents;
if (!Array.isArray(events)) {
  fail('no traceEvents array');
}
const model = Trace.TraceModel.Model.createWithAllHandlers();
await model.parse(events);
const data = model.parsedTrace().data;

// Processes and threads as the metadata names them.
const processNames = new Map();
const threadNames = new Map();
for (const e of events) {
  if (e.ph === 'M' && e.name === 'process_name') {
    processNames.set(e.pid, e.args.name);
  } else if (e.ph === 'M' && e.name === 'thread_name') {
    threadNames.set(`${e.pid}/${e.tid}`, e.args.name);
  }
}
for (const [pid, name] of processNames) {
  const seen = data.Meta.processNames.get(pid);
  if (!seen || seen.args.name !== name) {
    fail(`process ${pid}: the engine names it ${JSON.stringify(seen?.args.name)}, not ${
        JSON.stringify(name)}`);
  }
}

// Every complete event on its thread, counted per thread.
const slices = new Map();
for (const e of events) {
  if (e.ph === 'X') {
    const key = `${e.pid}/${e.tid}`;
    slices.set(key, (slices.get(key) ?? 0) + 1);
  }
}
let entries = 0;
for (const [key, n] of slices) {
  const [pid, tid] = key.split('/').map(Number);
  const thread = data.Renderer.processes.get(pid)?.threads.get(tid);
  if (!thread) {
    fail(`thread ${key} (${threadNames.get(key)}) is not in the engine's model`);
  }
  if (thread.name !== threadNames.get(key)) {
    fail(`thread ${key}: the engine names it ${JSON.stringify(thread.name)}, not ${
        JSON.stringify(threadNames.get(key))}`);
  }
  if (thread.entries.length !== n) {
    fail(`thread ${key}: ${thread.entries.length} entries in the engine, ${n} in the file`);
  }
  entries += n;
}

// Flows: the engine binds a flow event to the slice of the same pid, tid, category and
// timestamp and keeps one event per timestamp of a flow, so a flow shows there when it touches
// at least two timestamps (a collective whose ops all start at once cannot).
const flows = new Map();
for (const e of events) {
  if (e.ph === 's' || e.ph === 't' || e.ph === 'f') {
    if (!flows.has(e.id)) {
      flows.set(e.id, new Set());
    }
    flows.get(e.id).add(e.ts);
  }
}
let expected = 0;
for (const times of flows.values()) {
  expected += times.size >= 2 ? 1 : 0;
}
const bound = data.Flows.flows;
if (bound.length !== expected) {
  fail(`${bound.length} flows in the engine, ${expected} in the file (of ${flows.size})`);
}
for (const flow of bound) {
  for (const e of flow) {
    if (e.ph !== 'X' || e.cat !== 'op') {
      fail(`a flow is bound to ${JSON.stringify(e)}, not to an op`);
    }
  }
}
const counters = events.filter(e => e.ph === 'C').length;
console.log(`loaded: ${processNames.size} processes, ${threadNames.size} threads, ${
    entries} slices, ${bound.length} of ${flows.size} flows bound, ${counters} counter events`);
