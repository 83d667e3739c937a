#!/usr/bin/env node
// A tiny broker's address model, checked by brokerspec through the SUT protocol.
//
// This program implements brokerspec's *address-resolution* domain: addresses,
// the queues bound to them, and what a client-supplied name (a bare queue name,
// a fully qualified queue name `address::queue`, either one with a routing-type
// prefix such as `anycast://`) resolves to. It reads one JSON request per line on
// standard input and writes one JSON reply per line on standard output.
//
// It is laid out like a broker, from the inside out:
//
//   1. names             FQQN parsing, prefix stripping, name validation
//   2. outcomes          the JSON objects the broker answers with
//   3. profiles          the semantic options, and the three bundled profiles
//   4. the address model addresses, queues, the per-name count, settings, prefixes
//   5. operations        one method per protocol `op`
//   6. the protocol      hello / reset / op / bye, and decoding the arguments
//
// Only Node's standard library is used. Diagnostics go to standard error.

"use strict";

const readline = require("node:readline");

const PROTOCOL_VERSION = 1;
const ANYCAST = "ANYCAST";
const MULTICAST = "MULTICAST";
const ROUTING_TYPES = [ANYCAST, MULTICAST];
const FQQN_SEPARATOR = "::";
const CATCH_ALL = "#"; // the address-settings entry for every address without its own

// ---------------------------------------------------------------------------------
// 1. Names
// ---------------------------------------------------------------------------------

// Take a client-supplied name apart at the *first* `::`. Either part may be empty
// (`"::q1"` is address "" and queue "q1"); `"a::b::c"` is address "a", queue "b::c".
// A bare name is both its own address part and its own queue part.
function parseName(name) {
  const at = name.indexOf(FQQN_SEPARATOR);
  if (at < 0) return { isFqqn: false, address: name, queue: name };
  return { isFqqn: true, address: name.slice(0, at), queue: name.slice(at + FQQN_SEPARATOR.length) };
}

function fqqn(address, queue) {
  return address + FQQN_SEPARATOR + queue;
}

// Remove a configured routing-type prefix from the front of a name. The longest
// matching prefix wins; the result is [name without prefix, routing type or null].
function stripPrefix(name, prefixes) {
  let best = "";
  let routingType = null;
  for (const [prefix, type] of prefixes) {
    if (prefix !== "" && name.startsWith(prefix) && prefix.length > best.length) {
      best = prefix;
      routingType = type;
    }
  }
  return [name.slice(best.length), routingType];
}

// Why a name cannot name an address or a queue, or null when it can.
function nameProblem(name) {
  if (name === "") return "the name is empty";
  if (name.includes(FQQN_SEPARATOR)) return "the name contains the FQQN separator '::'";
  return null;
}

// Queue lists and routing-type sets are written sorted, in Unicode code-point order
// (JavaScript's default sort compares UTF-16 units, which differs for characters
// outside the Basic Multilingual Plane).
function byCodePoint(a, b) {
  const x = Array.from(a, (c) => c.codePointAt(0));
  const y = Array.from(b, (c) => c.codePointAt(0));
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return x[i] - y[i];
  }
  return x.length - y.length;
}

function sorted(strings) {
  return [...strings].sort(byCodePoint);
}

// ---------------------------------------------------------------------------------
// 2. Outcomes (written exactly as brokerspec's trace format has them)
// ---------------------------------------------------------------------------------

const outcome = {
  rejected: (reason) => ({ type: "rejected", reason }),
  configured: () => ({ type: "configured" }),
  addressCreated: (address) => ({ type: "address_created", address }),
  addressDeleted: (address, removedQueues) => ({ type: "address_deleted", address, removed_queues: removedQueues }),
  queueCreated: (address, queue) => ({ type: "queue_created", address, queue }),
  queueDeleted: (address, queue) => ({ type: "queue_deleted", address, queue }),
  resolved: (q) => ({ type: "resolved", address: q.address, queue: q.name, routing_type: q.routingType }),
  notFound: (name) => ({ type: "not_found", name }),
  ambiguous: (name, candidates) => ({ type: "ambiguous", name, candidates }),
  routed: (address, copies, anycastCandidates, createdAddress, createdQueue) => ({
    type: "routed", address, copies, anycast_candidates: anycastCandidates,
    created_address: createdAddress, created_queue: createdQueue,
  }),
  attached: (address, queue, createdAddress = null, createdQueue = null) => ({
    type: "attached", address, queue, created_address: createdAddress, created_queue: createdQueue,
  }),
};

// The reasons a `rejected` outcome carries.
const reason = {
  invalidName: (name, problem) => ({ type: "invalid_name", name, problem }),
  addressExists: (address) => ({ type: "address_exists", address }),
  addressNotFound: (address) => ({ type: "address_not_found", address }),
  addressHasQueues: (address, queues) => ({ type: "address_has_queues", address, queues }),
  queueExists: (queue, address) => ({ type: "queue_exists", queue, address }),
  queueNotFound: (name) => ({ type: "queue_not_found", name }),
  ambiguousName: (name, candidates) => ({ type: "ambiguous_name", name, candidates }),
  routingTypeNotAllowed: (address, routingType, allowed) => ({
    type: "routing_type_not_allowed", address, routing_type: routingType, allowed: sorted(allowed),
  }),
  queueRoutingTypeMismatch: (address, queue, queueRoutingType, requested) => ({
    type: "queue_routing_type_mismatch", address, queue, queue_routing_type: queueRoutingType, requested,
  }),
};

// A rejection for an unusable name, or null.
function rejectInvalidName(name) {
  const problem = nameProblem(name);
  return problem === null ? null : outcome.rejected(reason.invalidName(name, problem));
}

// ---------------------------------------------------------------------------------
// 3. Profiles: the semantic options of the addressing domain
// ---------------------------------------------------------------------------------
//
// nameScope                          "ADDRESS": a queue name is unique per address, so one bare
//                                    name can be bound on several addresses (and become ambiguous);
//                                    "BROKER": unique in the whole broker (released Artemis).
// fqqnChecksAddress                  lookup/consume/delete by FQQN insist on the address part
//                                    (AMQP); false: the address part is discarded (core protocol).
// anycastConsumeRejectsMulticastQueue  a bare-name ANYCAST consumer may not attach to a MULTICAST
//                                    queue (ARTEMIS-4512).
// sendReusesExistingQueue            an ANYCAST send to an address that has queues creates no
//                                    queue named like the address (ARTEMIS-2966).
// consumer                           "RESOLVE": a consumer resolves its name as a lookup does and
//                                    may auto-create its queue; "CORE": Artemis's core client, which
//                                    attaches by the name's queue part alone and creates nothing.

// Only the seed: the Artemis profiles also need Artemis's own name reading, core send and JMS
// consumer (spec/addressing/artemis.py), which this small example leaves out. Offering only what
// it implements keeps the verdicts honest: brokerspec reports the other profiles as skipped.
const PROFILES = {
  "seed": { nameScope: "ADDRESS", fqqnChecksAddress: true,
            anycastConsumeRejectsMulticastQueue: false, sendReusesExistingQueue: false, consumer: "RESOLVE" },
};

// Override values arrive as text: "true"/"false" (also yes/no, on/off, 1/0) for switches,
// the value's name for a choice.
function parseSwitch(text) {
  const word = text.trim().toLowerCase();
  if (["true", "1", "yes", "on"].includes(word)) return true;
  if (["false", "0", "no", "off"].includes(word)) return false;
  throw new Error(`takes true or false, not ${JSON.stringify(text)}`);
}

function parseConsumer(text) {
  const model = text.toUpperCase();
  if (model === "RESOLVE" || model === "CORE") return model;
  throw new Error(`takes one of RESOLVE, CORE, not ${JSON.stringify(text)}`);
}

function parseScope(text) {
  const scope = text.toUpperCase();
  if (scope === "ADDRESS" || scope === "BROKER") return scope;
  throw new Error(`takes one of ADDRESS, BROKER, not ${JSON.stringify(text)}`);
}

// `addressing.<option>` -> [the field in a profile's options, how its text is read]
const OPTIONS = {
  name_scope: ["nameScope", parseScope],
  fqqn_checks_address: ["fqqnChecksAddress", parseSwitch],
  anycast_consume_rejects_multicast_queue: ["anycastConsumeRejectsMulticastQueue", parseSwitch],
  send_reuses_existing_queue: ["sendReusesExistingQueue", parseSwitch],
  consumer: ["consumer", parseConsumer],
};

// Options of brokerspec's other domains cannot change address resolution; they are ignored.
const OTHER_DOMAINS = ["duplicates", "balancing", "topologies"];

// The options for a profile with its overrides applied, in order. Throws on anything unknown.
function profileOptions(profileName, overrides) {
  if (!Object.prototype.hasOwnProperty.call(PROFILES, profileName)) {
    throw new Error(`unknown profile ${JSON.stringify(profileName)}; known: ${Object.keys(PROFILES).join(", ")}`);
  }
  const options = { ...PROFILES[profileName] };
  for (const [dotted, value] of Object.entries(overrides)) {
    const [domain, option] = [dotted.split(".")[0], dotted.slice(dotted.indexOf(".") + 1)];
    if (OTHER_DOMAINS.includes(domain)) continue;
    if (domain !== "addressing" || !Object.prototype.hasOwnProperty.call(OPTIONS, option)) {
      throw new Error(`unsupported override ${JSON.stringify(dotted)}; supported: ` +
                      Object.keys(OPTIONS).map((o) => "addressing." + o).join(", "));
    }
    if (typeof value !== "string") throw new Error(`override ${dotted} must be a string`);
    const [field, parse] = OPTIONS[option];
    try {
      options[field] = parse(value);
    } catch (problem) {
      throw new Error(`option ${dotted} ${problem.message}`);
    }
  }
  return options;
}

// ---------------------------------------------------------------------------------
// 4. The address model
// ---------------------------------------------------------------------------------

// Default auto-creation settings, as Artemis's address-settings defaults.
const DEFAULT_SETTINGS = {
  autoCreateAddresses: true,
  autoCreateQueues: true,
  defaultAddressRoutingType: MULTICAST,
  defaultQueueRoutingType: MULTICAST,
};

class Broker {
  constructor(options) {
    this.options = options;
    // address name -> { name, routingTypes: Set, queues: Map(queue name -> queue) }
    // A queue is { address, name, routingType } and lives inside its address.
    this.addresses = new Map();
    // For every queue name: on how many addresses it is bound. 0 means not found,
    // 1 resolves, 2 or more makes the bare name ambiguous (only possible when
    // queue names are unique per address). Names with count 0 are not kept.
    this.nameCounts = new Map();
    // address name (or "#") -> settings
    this.settings = new Map([[CATCH_ALL, { ...DEFAULT_SETTINGS }]]);
    // acceptor routing-type prefix -> routing type
    this.prefixes = new Map();
  }

  // --- queries ---

  queue(address, name) {
    const found = this.addresses.get(address);
    return (found && found.queues.get(name)) || null;
  }

  // Every queue called `name`, on any address, ordered by FQQN.
  queuesNamed(name) {
    const queues = [];
    for (const address of this.addresses.values()) {
      if (address.queues.has(name)) queues.push(address.queues.get(name));
    }
    return queues.sort((a, b) => byCodePoint(fqqn(a.address, a.name), fqqn(b.address, b.name)));
  }

  // Every queue bound to `address`, ordered by FQQN.
  queuesOf(address) {
    const found = this.addresses.get(address);
    if (!found) return [];
    return [...found.queues.values()].sort((a, b) => byCodePoint(a.name, b.name));
  }

  settingsFor(address) {
    return this.settings.get(address) || this.settings.get(CATCH_ALL);
  }

  // The queue that stops `address::name` from being created, or null. With
  // broker-wide names that is any queue of that name; otherwise only one on `address`.
  blockingQueue(address, name) {
    if (this.options.nameScope === "BROKER") return this.queuesNamed(name)[0] || null;
    return this.queue(address, name);
  }

  // --- changes (the per-name count moves with every bind and unbind) ---

  bind(queue) {
    this.addresses.get(queue.address).queues.set(queue.name, queue);
    this.nameCounts.set(queue.name, (this.nameCounts.get(queue.name) || 0) + 1);
  }

  unbind(queue) {
    this.addresses.get(queue.address).queues.delete(queue.name);
    const count = this.nameCounts.get(queue.name) - 1;
    if (count > 0) this.nameCounts.set(queue.name, count);
    else this.nameCounts.delete(queue.name);
  }

  // --- resolution ---

  // Resolve a (prefix-free) client name: a `resolved`, `not_found` or `ambiguous` outcome.
  // An FQQN names the queue on its address, or nothing; unless the profile discards
  // the address part, when its queue part is resolved like a bare name (rules
  // ADDR-LOOKUP-FQQN-IGNORED, ADDR-LOOKUP-TWICE). A bare name is decided by its per-name count.
  resolve(name) {
    const parsed = parseName(name);
    if (parsed.isFqqn && this.options.fqqnChecksAddress) {
      const queue = this.queue(parsed.address, parsed.queue);
      return queue ? outcome.resolved(queue) : outcome.notFound(name);
    }
    // Artemis's queue query (address part discarded) takes the queue part apart once more, as
    // `getBinding` does, and a miss names the queue part it asked for.
    const wanted = parsed.isFqqn ? parseName(parsed.queue).queue : parsed.queue;
    const count = this.nameCounts.get(wanted) || 0;
    if (count === 0) return outcome.notFound(parsed.isFqqn ? parsed.queue : name);
    const candidates = this.queuesNamed(wanted);
    if (count === 1) return outcome.resolved(candidates[0]);
    return outcome.ambiguous(name, candidates.map((q) => fqqn(q.address, q.name)));
  }

  // Auto-creation, step one: what it takes for `address` to exist and allow `routingType`.
  // Returns { rejection } or { create: bool, widen: bool }; nothing is changed yet, so a
  // command that is refused later leaves the broker exactly as it was.
  planAddress(address, routingType, settings) {
    const existing = this.addresses.get(address);
    if (!existing) {
      if (!settings.autoCreateAddresses) return { rejection: outcome.rejected(reason.addressNotFound(address)) };
      return { create: true, widen: false };
    }
    if (existing.routingTypes.has(routingType)) return { create: false, widen: false };
    if (!settings.autoCreateAddresses) {
      return { rejection: outcome.rejected(reason.routingTypeNotAllowed(address, routingType, existing.routingTypes)) };
    }
    return { create: false, widen: true };
  }

  // Auto-creation, step two: carry out a plan from planAddress.
  applyAddressPlan(address, routingType, plan) {
    if (plan.create) {
      this.addresses.set(address, { name: address, routingTypes: new Set([routingType]), queues: new Map() });
    } else if (plan.widen) {
      this.addresses.get(address).routingTypes.add(routingType);
    }
  }

  // ---------------------------------------------------------------------------------
  // 5. Operations: one per protocol `op`
  // ---------------------------------------------------------------------------------

  create_address({ address, routingTypes }) {
    const invalid = rejectInvalidName(address);
    if (invalid) return invalid;
    if (this.addresses.has(address)) return outcome.rejected(reason.addressExists(address));
    this.addresses.set(address, { name: address, routingTypes: new Set(routingTypes), queues: new Map() });
    return outcome.addressCreated(address);
  }

  delete_address({ address, force }) {
    if (!this.addresses.has(address)) return outcome.rejected(reason.addressNotFound(address));
    const queues = this.queuesOf(address);
    const fqqns = queues.map((q) => fqqn(q.address, q.name));
    if (queues.length > 0 && !force) return outcome.rejected(reason.addressHasQueues(address, fqqns));
    for (const queue of queues) this.unbind(queue);
    this.addresses.delete(address);
    return outcome.addressDeleted(address, fqqns);
  }

  // Checks in Artemis's order: the queue name, an existing queue, the address, the routing type.
  create_queue({ address, queue, routingType }) {
    const invalid = rejectInvalidName(queue);
    if (invalid) return invalid;
    const blocking = this.blockingQueue(address, queue);
    if (blocking) return outcome.rejected(reason.queueExists(blocking.name, blocking.address));
    const target = this.addresses.get(address);
    if (!target) return outcome.rejected(reason.addressNotFound(address));
    if (!target.routingTypes.has(routingType)) {
      return outcome.rejected(reason.routingTypeNotAllowed(address, routingType, target.routingTypes));
    }
    this.bind({ address, name: queue, routingType });
    return outcome.queueCreated(address, queue);
  }

  // The name resolves exactly as a lookup does; deleting one of two same-named queues
  // makes the bare name resolve again (the count goes down).
  delete_queue({ name: clientName }) {
    const [name] = stripPrefix(clientName, this.prefixes);
    const found = this.resolve(name);
    if (found.type === "not_found") return outcome.rejected(reason.queueNotFound(name));
    if (found.type === "ambiguous") return outcome.rejected(reason.ambiguousName(name, found.candidates));
    this.unbind(this.queue(found.address, found.queue));
    return outcome.queueDeleted(found.address, found.queue);
  }

  lookup({ name: clientName }) {
    const [name] = stripPrefix(clientName, this.prefixes);
    return this.resolve(name);
  }

  // Send to an address or an FQQN. A prefix's routing type overrides the message's;
  // the prefix is removed before the name is parsed. Missing addresses (and, for a
  // typed send, queues) are auto-created as the settings allow; the outcome says
  // where the message may go.
  send({ name: clientName, routingType: messageType }) {
    const [name, prefixType] = stripPrefix(clientName, this.prefixes);
    const routingType = prefixType || messageType;
    const parsed = parseName(name);
    const invalid = rejectInvalidName(parsed.address) || (parsed.isFqqn ? rejectInvalidName(parsed.queue) : null);
    if (invalid) return invalid;
    const address = parsed.address;
    const settings = this.settingsFor(address);

    // The address must exist, and allow the routing type if the message has one.
    // An untyped send to a missing address creates it with the default routing type.
    let addressType = null;
    let addressPlan = { create: false, widen: false };
    if (routingType !== null || !this.addresses.has(address)) {
      addressType = routingType || settings.defaultAddressRoutingType;
      addressPlan = this.planAddress(address, addressType, settings);
      if (addressPlan.rejection) return addressPlan.rejection;
    }

    // The queue a typed send auto-creates, if any (auto-creation adds no queues
    // before this point, so the queues seen here are the ones that will exist).
    const wanted = this.queueWantedBySend(parsed, routingType);
    this.applyAddressPlan(address, addressType, addressPlan);
    let createdQueue = null;
    if (wanted !== null && settings.autoCreateQueues) {
      this.bind({ address, name: wanted, routingType });
      createdQueue = fqqn(address, wanted);
    }
    const createdAddress = addressPlan.create ? address : null;

    // An FQQN reaches only its own queue, and only if the routing types agree.
    if (parsed.isFqqn) {
      const target = this.queue(address, parsed.queue);
      const hit = target !== null && (routingType === null || routingType === target.routingType);
      const copies = hit ? [fqqn(address, target.name)] : [];
      return outcome.routed(address, copies, [], createdAddress, createdQueue);
    }
    // An address: a copy to every MULTICAST queue, one of the ANYCAST queues; a message
    // without a routing type does both.
    const queues = this.queuesOf(address);
    const copies = queues.filter((q) => q.routingType === MULTICAST && routingType !== ANYCAST);
    const anycast = queues.filter((q) => q.routingType === ANYCAST && routingType !== MULTICAST);
    const names = (list) => list.map((q) => fqqn(q.address, q.name));
    return outcome.routed(address, names(copies), names(anycast), createdAddress, createdQueue);
  }

  // The queue name a send would auto-create, or null. An untyped send creates none;
  // an FQQN wants its queue; an ANYCAST send to an address wants a queue named like
  // the address (unless the profile reuses the address's existing queues); a name
  // already taken is never created.
  queueWantedBySend(parsed, routingType) {
    if (routingType === null) return null;
    if (!parsed.isFqqn) {
      if (routingType !== ANYCAST) return null;
      if (this.options.sendReusesExistingQueue && this.queuesOf(parsed.address).length > 0) return null;
    }
    const wanted = parsed.queue; // for a bare name, the queue part is the address itself
    return this.blockingQueue(parsed.address, wanted) ? null : wanted;
  }

  // Attach a consumer to the queue the name resolves to, auto-creating it when allowed:
  // a bare name creates queue and address of that name, an FQQN its queue on its address.
  consume({ name: clientName, routingType: consumerType }) {
    const [name, prefixType] = stripPrefix(clientName, this.prefixes);
    const routingType = prefixType || consumerType;
    const parsed = parseName(name);
    if (this.options.consumer === "CORE") {
      // The core client: the queue part alone finds the queue, on whatever address; nothing is made.
      const named = this.queuesNamed(parsed.queue);
      if (named.length === 0) return outcome.rejected(reason.queueNotFound(clientName));
      if (named.length > 1) {
        return outcome.rejected(reason.ambiguousName(clientName, named.map((q) => fqqn(q.address, q.name))));
      }
      return outcome.attached(named[0].address, named[0].name);
    }
    const found = this.resolve(name);
    if (found.type === "resolved") {
      if (this.options.anycastConsumeRejectsMulticastQueue && !parsed.isFqqn &&
          routingType === ANYCAST && found.routing_type === MULTICAST) {
        return outcome.rejected(reason.queueRoutingTypeMismatch(found.address, found.queue, MULTICAST, ANYCAST));
      }
      return outcome.attached(found.address, found.queue);
    }
    if (found.type === "ambiguous") return outcome.rejected(reason.ambiguousName(name, found.candidates));

    const { address, queue } = parsed;
    // The queue name is taken on another address (broker-wide names): not this queue.
    if (queue !== "" && this.blockingQueue(address, queue)) return outcome.rejected(reason.queueNotFound(name));
    const invalid = rejectInvalidName(address) || rejectInvalidName(queue);
    if (invalid) return invalid;
    const settings = this.settingsFor(address);
    if (!settings.autoCreateQueues) return outcome.rejected(reason.queueNotFound(name));
    const queueType = routingType || settings.defaultQueueRoutingType;
    const plan = this.planAddress(address, queueType, settings);
    if (plan.rejection) return plan.rejection;
    this.applyAddressPlan(address, queueType, plan);
    this.bind({ address, name: queue, routingType: queueType });
    return outcome.attached(address, queue, plan.create ? address : null, fqqn(address, queue));
  }

  // Configure an acceptor prefix, or remove it (routing type null). An empty prefix
  // would match every name, so it is refused.
  set_prefix({ prefix, routingType }) {
    if (prefix === "") return outcome.rejected(reason.invalidName("", "the prefix is empty"));
    if (routingType === null) this.prefixes.delete(prefix);
    else this.prefixes.set(prefix, routingType);
    return outcome.configured();
  }

  // Settings match an address name exactly; "#" is the catch-all.
  set_address_settings({ match, ...settings }) {
    if (match === "") return outcome.rejected(reason.invalidName("", "the settings match is empty"));
    this.settings.set(match, settings);
    return outcome.configured();
  }
}

// ---------------------------------------------------------------------------------
// 6. The protocol
// ---------------------------------------------------------------------------------

// Reading the arguments of an op. An absent argument takes its default; one without a
// default is required. A wrong value throws an Error, which becomes an `error` reply.
const STRING = { test: (v) => typeof v === "string", expects: "a string" };
const BOOLEAN = { test: (v) => typeof v === "boolean", expects: "true or false" };
const ROUTING_TYPE = { test: (v) => ROUTING_TYPES.includes(v), expects: "ANYCAST or MULTICAST" };
const ROUTING_TYPE_OR_NULL = { test: (v) => v === null || ROUTING_TYPES.includes(v),
                               expects: "ANYCAST, MULTICAST or null" };
const ROUTING_TYPE_SET = { test: (v) => Array.isArray(v) && v.every((t) => ROUTING_TYPES.includes(t)),
                           expects: "a list of routing types" };

function argument(args, field, kind, fallback) {
  if (!Object.prototype.hasOwnProperty.call(args, field)) {
    if (fallback === undefined) throw new Error(`args.${field}: missing field`);
    return fallback;
  }
  const value = args[field];
  if (!kind.test(value)) throw new Error(`args.${field}: expected ${kind.expects}, got ${JSON.stringify(value)}`);
  return value;
}

// op name -> the arguments its Broker method takes, read from the request's `args`.
const OPS = {
  create_address: (a) => ({ address: argument(a, "address", STRING),
                            routingTypes: argument(a, "routing_types", ROUTING_TYPE_SET) }),
  delete_address: (a) => ({ address: argument(a, "address", STRING), force: argument(a, "force", BOOLEAN, false) }),
  create_queue: (a) => ({ address: argument(a, "address", STRING), queue: argument(a, "queue", STRING),
                          routingType: argument(a, "routing_type", ROUTING_TYPE) }),
  delete_queue: (a) => ({ name: argument(a, "name", STRING) }),
  lookup: (a) => ({ name: argument(a, "name", STRING) }),
  send: (a) => ({ name: argument(a, "name", STRING),
                  routingType: argument(a, "routing_type", ROUTING_TYPE_OR_NULL, null) }),
  consume: (a) => ({ name: argument(a, "name", STRING),
                     routingType: argument(a, "routing_type", ROUTING_TYPE_OR_NULL, null) }),
  set_prefix: (a) => ({ prefix: argument(a, "prefix", STRING),
                        routingType: argument(a, "routing_type", ROUTING_TYPE_OR_NULL) }),
  set_address_settings: (a) => ({
    match: argument(a, "match", STRING),
    autoCreateAddresses: argument(a, "auto_create_addresses", BOOLEAN, true),
    autoCreateQueues: argument(a, "auto_create_queues", BOOLEAN, true),
    defaultAddressRoutingType: argument(a, "default_address_routing_type", ROUTING_TYPE, MULTICAST),
    defaultQueueRoutingType: argument(a, "default_queue_routing_type", ROUTING_TYPE, MULTICAST),
  }),
};

let broker = null; // the broker of the last reset

function error(message, seq) {
  const reply = { v: PROTOCOL_VERSION, type: "error", message };
  if (seq !== undefined) reply.seq = seq;
  return reply;
}

// The reply to one request, or null for `bye`.
function answer(request) {
  if (request === null || typeof request !== "object" || Array.isArray(request)) {
    return error("a request must be a JSON object");
  }
  if (request.v !== PROTOCOL_VERSION) {
    return error(`protocol version ${JSON.stringify(request.v)} is not spoken here; ` +
                 `this SUT speaks ${PROTOCOL_VERSION}`);
  }
  switch (request.type) {
    case "hello":
      // pipelining: each line is answered before the next one is read, in order, so brokerspec may write up
      // to 64 requests ahead of their replies (docs/sut-protocol.md, "Pipelining").
      return { v: PROTOCOL_VERSION, type: "hello", name: "node-sut example 1.0",
               domains: ["addressing"], profiles: Object.keys(PROFILES), pipelining: 64 };
    case "reset": {
      if (request.domain !== "addressing") {
        return error(`domain ${JSON.stringify(request.domain)} is not implemented; only addressing`);
      }
      const overrides = request.overrides === undefined ? {} : request.overrides;
      if (overrides === null || typeof overrides !== "object" || Array.isArray(overrides)) {
        return error("overrides must be an object of option -> value");
      }
      broker = null; // a failed reset leaves no broker behind
      try {
        broker = new Broker(profileOptions(request.profile, overrides));
      } catch (problem) {
        return error(problem.message);
      }
      return { v: PROTOCOL_VERSION, type: "ready" };
    }
    case "op": {
      const seq = request.seq;
      if (broker === null) return error("an op before any reset", seq);
      if (!Object.prototype.hasOwnProperty.call(OPS, request.op)) {
        const known = Object.keys(OPS).join(", ");
        return error(`unknown addressing operation ${JSON.stringify(request.op)}; known: ${known}`, seq);
      }
      const args = request.args;
      if (args === null || typeof args !== "object" || Array.isArray(args)) return error("args must be an object", seq);
      let decoded;
      try {
        decoded = OPS[request.op](args);
      } catch (problem) {
        return error(problem.message, seq);
      }
      try {
        return { v: PROTOCOL_VERSION, type: "outcome", seq, outcome: broker[request.op](decoded) };
      } catch (problem) {
        // A bug in the broker above: report it for this op and carry on.
        process.stderr.write(`node-sut: ${problem.stack || problem}\n`);
        return error(`internal error: ${problem.message}`, seq);
      }
    }
    case "bye":
      return null;
    default:
      return error(`unknown request type ${JSON.stringify(request.type)}`);
  }
}

// One request per line in, one reply per line out, in order, until `bye` or end of input.
function main() {
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  let finished = false; // after `bye`, lines already read are ignored
  lines.on("line", (line) => {
    if (finished || line.trim() === "") return;
    let reply;
    try {
      reply = answer(JSON.parse(line));
    } catch (problem) {
      if (!(problem instanceof SyntaxError)) throw problem; // answer() catches its own failures
      reply = error(`not JSON: ${problem.message}`);
    }
    if (reply === null) {
      finished = true;
      lines.close();
      process.stdin.destroy();
      return;
    }
    process.stdout.write(JSON.stringify(reply) + "\n");
  });
}

main();
