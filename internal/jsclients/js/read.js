// read.js consumes topics with kafkajs and decodes each record as an
// application written outside mooncdc would: with
// @kafkajs/confluent-schema-registry (Protobuf, JSON Schema) or the
// CloudEvents SDK. It prints one JSON line per record on stdout and exits
// 0 when every topic gave its count of records, 2 at the deadline, 3 when
// the kafkajs consumer crashed.
//
// The request is JSON in argv[2] (see internal/jsclients/read.go):
//   {"brokers": ["127.0.0.1:9092"], "registry": "http://…", "timeoutMs": 60000,
//    "topics": [{"topic": "t", "count": 3, "key": "registry", "value": "cloudevent",
//                "registryOptions": {"JSON": {"strict": false}}}]}
// key and value are "registry" (SchemaRegistry.decode), "cloudevent"
// (the SDK: the event format and the Kafka binding), "string" or "none".
'use strict';

const { Kafka, logLevel } = require('kafkajs');
const { SchemaRegistry } = require('@kafkajs/confluent-schema-registry');
const ce = require('cloudevents');
const { isValidType } = require('cloudevents/dist/event/validation');

const req = JSON.parse(process.argv[2]);

function errText(e) {
  if (e === null || e === undefined) return null;
  let s = String(e && e.message ? e.message : e);
  if (e && Array.isArray(e.errors) && e.errors.length) s += ' ' + JSON.stringify(e.errors);
  if (e && Array.isArray(e.paths) && e.paths.length) s += ' ' + JSON.stringify(e.paths);
  return s;
}

// One registry client per distinct options, as an application makes one.
const registries = new Map();
function registryFor(opts) {
  const k = JSON.stringify(opts || null);
  if (!registries.has(k)) {
    registries.set(k, new SchemaRegistry({ host: req.registry }, opts || undefined));
  }
  return registries.get(k);
}

// plain turns what the registry client returns into JSON-safe data: a
// protobufjs message through its type's toObject, with 64-bit integers
// and bytes as strings (the protobufjs JSON conventions) and every field,
// defaults included, so that a reader sees zero values as zero.
function plain(v) {
  if (v && v.$type && typeof v.$type.toObject === 'function') {
    return v.$type.toObject(v, { longs: String, enums: String, bytes: String, defaults: true, arrays: true, objects: true });
  }
  return v;
}

async function decodeRegistry(buf, opts) {
  const out = {};
  try {
    out.schemaId = buf.length >= 5 ? buf.readInt32BE(1) : null;
    out.decoded = plain(await registryFor(opts).decode(buf));
  } catch (e) {
    out.error = errText(e);
  }
  return out;
}

// decodeCloudEvent reads the value as the SDK would: the structured JSON
// event format in strict mode (every check the SDK makes), the same
// without the attributes it refuses one by one (to show that nothing
// else fails), and the Kafka protocol binding over the record as it came
// (its headers decide the mode).
function decodeCloudEvent(message) {
  const out = {};
  let obj;
  try {
    obj = JSON.parse(message.value.toString('utf8'));
  } catch (e) {
    out.error = errText(e);
    return out;
  }
  out.decoded = obj;
  try {
    out.event = new ce.CloudEvent(obj).toJSON();
    out.strictError = null;
  } catch (e) {
    out.strictError = errText(e);
  }
  const known = new Set(['id', 'time', 'type', 'source', 'specversion', 'datacontenttype', 'subject',
    'datacontentencoding', 'dataschema', 'data_base64', 'schemaurl', 'data']);
  out.refused = [];
  const rest = {};
  for (const [k, v] of Object.entries(obj)) {
    if (!known.has(k) && (!/^[a-z0-9]+$/.test(k) || !isValidType(v))) {
      out.refused.push(k);
    } else {
      rest[k] = v;
    }
  }
  try {
    new ce.CloudEvent(rest).validate();
    out.restError = null;
  } catch (e) {
    out.restError = errText(e);
  }
  try {
    const headers = {};
    for (const [k, v] of Object.entries(message.headers || {})) headers[k] = v === null ? null : v.toString('utf8');
    ce.Kafka.toEvent({ headers, key: message.key, value: message.value });
    out.bindingError = null;
  } catch (e) {
    out.bindingError = errText(e);
  }
  return out;
}

async function decode(mode, buf, message, opts) {
  if (buf === null || buf === undefined) return { null: true };
  switch (mode) {
    case 'registry': return decodeRegistry(buf, opts);
    case 'cloudevent': return decodeCloudEvent(message);
    case 'string': return { decoded: buf.toString('utf8') };
    case 'none': return {};
    default: throw new Error(`unknown decoding ${mode}`);
  }
}

async function main() {
  const kafka = new Kafka({
    clientId: 'mooncdc-jsclients',
    brokers: req.brokers,
    logLevel: logLevel.ERROR,
    logCreator: () => ({ namespace, log }) => process.stderr.write(`kafkajs ${namespace}: ${log.message}\n`),
    retry: { retries: 10, initialRetryTime: 50 },
  });
  const consumer = kafka.consumer({ groupId: `mooncdc-jsclients-${process.pid}-${Date.now()}`, maxWaitTimeInMs: 100 });
  const byTopic = new Map(req.topics.map(t => [t.topic, t]));
  const left = new Map(req.topics.map(t => [t.topic, t.count]));
  let finish;
  const done = new Promise(resolve => { finish = resolve; });
  const timer = setTimeout(() => finish(false), req.timeoutMs || 60000);
  // A crash (an undecodable batch, a codec kafkajs lacks) ends the run
  // at once: waiting for the deadline would only hide it.
  let crash = null;
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    crash = payload.error;
    finish(false);
  });
  await consumer.connect();
  await consumer.subscribe({ topics: req.topics.map(t => t.topic), fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ topic, partition, message }) => {
      const t = byTopic.get(topic);
      if (left.get(topic) <= 0) return;
      const line = {
        topic, partition, offset: message.offset,
        key: await decode(t.key || 'none', message.key, message, t.registryOptions),
        value: await decode(t.value, message.value, message, t.registryOptions),
      };
      process.stdout.write(JSON.stringify(line) + '\n');
      left.set(topic, left.get(topic) - 1);
      if ([...left.values()].every(n => n <= 0)) finish(true);
    },
  });
  const ok = await done;
  clearTimeout(timer);
  await consumer.disconnect();
  if (crash) {
    process.stderr.write(`read.js: kafkajs consumer crashed: ${errText(crash)}\n`);
    process.exit(3);
  }
  if (!ok) {
    const missing = [...left.entries()].filter(([, n]) => n > 0).map(([t, n]) => `${t}: ${n} more`);
    process.stderr.write(`read.js: deadline of ${req.timeoutMs} ms passed still waiting for ${missing.join(', ')}\n`);
    process.exit(2);
  }
}

main().catch(e => {
  process.stderr.write(`read.js: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
