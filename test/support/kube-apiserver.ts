// A stand-in Kubernetes API server for the CRD watcher's tests, speaking the real wire protocol
// to the real client library: lists with resourceVersion, chunked newline-delimited watch streams
// (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR), 410 Gone for an expired resourceVersion, graceful
// and abrupt stream ends, the status subresource (PUT with optimistic concurrency → 409, merge
// patch), generations and managedFields, finalizers (a delete marks the object until its last
// finalizer is removed), 404 for kinds not installed (and installing one later), optional schema
// validation (422, as for a CRD's openAPIV3Schema), and Leases. No real API server can run here.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';

type Json = Record<string, any>;

interface StoredEvent {
  readonly rv: number;
  readonly resource: string;
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly object: Json;
}

interface Watcher {
  readonly resource: string;
  readonly namespace: string | undefined;
  readonly response: ServerResponse;
}

export interface ResourceRef {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
}

export const LEASES: ResourceRef = { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', kind: 'Lease' };
export const SECRETS: ResourceRef = { group: '', version: 'v1', plural: 'secrets', kind: 'Secret' };

export interface RecordedRequest {
  /** The bearer token the client sent. */
  readonly token: string;
  readonly method: string;
  readonly path: string;
  readonly watch: boolean;
  readonly contentType: string | undefined;
}

export class FakeKubeApiServer {
  /** resource key (`group/plural`) → `namespace/name` → object. */
  readonly #objects = new Map<string, Map<string, Json>>();
  readonly #events: StoredEvent[] = [];
  readonly #watchers = new Set<Watcher>();
  readonly #sockets = new Set<Socket>();
  readonly #kinds = new Map<string, ResourceRef>();
  #rv = 100;
  #compactedRv = 0;
  #server: Server | undefined;
  /** The server's clock (managedFields times, creation times); tests may move it. */
  now: () => Date = () => new Date();
  /** Plurals whose requests are answered 503 (an overloaded or partitioned API server, for them). */
  readonly unavailable = new Set<string>();
  readonly requests: RecordedRequest[] = [];

  /** openAPIV3Schema per `group/plural`: objects are pruned to it, as an API server prunes custom resources. */
  readonly #schemas: ReadonlyMap<string, Json>;

  /** Refuses objects its schema does not accept (422), as an API server does; by `group/plural`. */
  readonly #validators: ReadonlyMap<string, (object: Json) => string | undefined>;

  constructor(
    resources: readonly ResourceRef[],
    options: { readonly schemas?: ReadonlyMap<string, Json>; readonly validators?: ReadonlyMap<string, (object: Json) => string | undefined> } = {},
  ) {
    for (const resource of [...resources, LEASES, SECRETS]) this.#kinds.set(`${resource.group}/${resource.plural}`, resource);
    this.#schemas = options.schemas ?? new Map();
    this.#validators = options.validators ?? new Map();
  }

  /** Installs a kind after the start (a CRD applied later): its requests stop answering 404. */
  serve(resource: ResourceRef): void {
    this.#kinds.set(`${resource.group}/${resource.plural}`, resource);
  }

  async start(): Promise<void> {
    this.#server = createServer((request, response) => {
      this.#handle(request, response).catch((error: unknown) => {
        if (!response.headersSent) this.#status(response, 500, 'InternalError', String(error));
      });
    });
    this.#server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
  }

  get url(): string {
    return `http://127.0.0.1:${(this.#server!.address() as AddressInfo).port}`;
  }

  /** A client configuration; the token tells whose requests are whose in `requests`. */
  kubeConfig(token = 'hub'): KubeConfig {
    const config = new KubeConfig();
    config.loadFromOptions({
      clusters: [{ name: 'stand-in', server: this.url, skipTLSVerify: true }],
      users: [{ name: 'tester', token }],
      contexts: [{ name: 'stand-in', cluster: 'stand-in', user: 'tester' }],
      currentContext: 'stand-in',
    });
    return config;
  }

  async stop(): Promise<void> {
    this.closeWatches({ abrupt: true });
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server?.close(() => resolve()) ?? resolve());
  }

  // ---- test controls -------------------------------------------------------------------------

  /** Creates or updates an object as a user would (`kubectl apply`): spec/labels, not status. */
  apply(resource: ResourceRef, object: Json, manager = 'kubectl'): Json {
    const key = this.#key(resource);
    const invalid = this.#invalid(key, object);
    if (invalid !== undefined) throw new Error(`${resource.kind} ${object.metadata?.name} is invalid: ${invalid}`);
    const id = `${object.metadata.namespace ?? ''}/${object.metadata.name}`;
    const existing = this.#objects.get(key)?.get(id);
    if (existing === undefined) return this.#create(resource, object, manager);
    const next = { ...existing, ...object, status: object.status ?? existing.status, metadata: { ...existing.metadata, ...object.metadata } };
    return this.#update(resource, id, next, { manager, subresource: undefined });
  }

  /** Sets an object's status (as its own controller would, e.g. Flux on a Kustomization). */
  setStatus(resource: ResourceRef, namespace: string, name: string, status: Json, manager = 'controller'): Json {
    const id = `${namespace}/${name}`;
    const existing = this.#objects.get(this.#key(resource))?.get(id);
    if (existing === undefined) throw new Error(`no ${resource.plural} ${id}`);
    return this.#update(resource, id, { ...existing, status }, { manager, subresource: 'status' });
  }

  /** Deletes an object; one with finalizers is only marked (deletionTimestamp) until they are removed. */
  delete(resource: ResourceRef, namespace: string, name: string): void {
    const key = this.#key(resource);
    const id = `${namespace}/${name}`;
    const existing = this.#objects.get(key)?.get(id);
    if (existing === undefined) return;
    if ((existing.metadata.finalizers ?? []).length > 0) {
      if (existing.metadata.deletionTimestamp === undefined) {
        const metadata = { ...existing.metadata, deletionTimestamp: seconds(this.now()), deletionGracePeriodSeconds: 0 };
        this.#update(resource, id, { ...existing, metadata }, { manager: 'kube-apiserver', subresource: undefined });
      }
      return;
    }
    this.#objects.get(key)!.delete(id);
    this.#emit(key, 'DELETED', { ...existing, metadata: { ...existing.metadata, resourceVersion: String(++this.#rv) } });
  }

  get(resource: ResourceRef, namespace: string, name: string): Json | undefined {
    return this.#objects.get(this.#key(resource))?.get(`${namespace}/${name}`);
  }

  /** Ends every open watch: gracefully (the stream ends) or abruptly (the socket is destroyed). */
  closeWatches(options: { abrupt: boolean }): void {
    for (const watcher of this.#watchers) {
      if (options.abrupt) watcher.response.socket?.destroy();
      else watcher.response.end();
    }
    this.#watchers.clear();
  }

  /** Forgets history: a watch from any older resourceVersion now gets 410 Gone. */
  compact(): void {
    this.#compactedRv = this.#rv;
    this.#events.length = 0;
  }

  /** Sends a BOOKMARK to every open watch. */
  bookmark(): void {
    for (const watcher of this.#watchers) {
      const resource = this.#kinds.get(watcher.resource)!;
      this.#write(watcher, {
        type: 'BOOKMARK',
        object: { apiVersion: `${resource.group}/${resource.version}`, kind: resource.kind, metadata: { resourceVersion: String(this.#rv) } },
      });
    }
  }

  watchRequests(plural: string): number {
    return this.requests.filter((request) => request.watch && request.path.endsWith(`/${plural}`)).length;
  }

  // ---- the protocol --------------------------------------------------------------------------

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://stand-in');
    const watch = url.searchParams.get('watch') === 'true';
    this.requests.push({
      token: (request.headers.authorization ?? '').replace(/^Bearer\s+/i, ''),
      method: request.method ?? 'GET',
      path: url.pathname,
      watch,
      contentType: request.headers['content-type'],
    });
    // /apis/{group}/{version}/… for API groups, /api/v1/… for the core group (Secrets).
    const match =
      /^\/(?:apis\/([^/]+)|api)\/([^/]+)(?:\/namespaces\/([^/]+))?\/([^/]+)(?:\/([^/]+))?(?:\/(status))?$/.exec(url.pathname);
    if (match === null) return this.#status(response, 404, 'NotFound', `no route for ${url.pathname}`);
    const [, group = '', , namespace, plural, name, subresource] = match;
    const key = `${group}/${plural}`;
    const resource = this.#kinds.get(key);
    if (resource === undefined) return this.#status(response, 404, 'NotFound', `the server could not find the requested resource (${key})`);
    if (this.unavailable.has(plural ?? '')) return this.#status(response, 503, 'ServiceUnavailable', `${plural} are unavailable`);
    const body = request.method === 'GET' || request.method === 'DELETE' ? undefined : await readJson(request);
    const invalid = request.method === 'POST' || (request.method === 'PUT' && subresource === undefined) ? this.#invalid(key, body ?? {}) : undefined;
    if (invalid !== undefined) return this.#status(response, 422, 'Invalid', `${resource.kind} "${body?.metadata?.name}" is invalid: ${invalid}`);

    if (name === undefined) {
      if (request.method === 'POST' && namespace !== undefined) {
        if (this.#objects.get(key)?.has(`${namespace}/${body?.metadata?.name}`)) {
          return this.#status(response, 409, 'AlreadyExists', `${plural} "${body?.metadata?.name}" already exists`);
        }
        return this.#json(response, 201, this.#create(resource, { ...body, metadata: { ...body?.metadata, namespace } }, 'client'));
      }
      if (watch) return this.#watch(key, namespace, url.searchParams.get('resourceVersion') ?? '', response);
      const items = [...(this.#objects.get(key)?.values() ?? [])].filter(
        (object) => namespace === undefined || object.metadata.namespace === namespace,
      );
      return this.#json(response, 200, {
        apiVersion: `${resource.group}/${resource.version}`,
        kind: `${resource.kind}List`,
        metadata: { resourceVersion: String(this.#rv) },
        items,
      });
    }

    const id = `${namespace ?? ''}/${name}`;
    const existing = this.#objects.get(key)?.get(id);
    if (existing === undefined) return this.#status(response, 404, 'NotFound', `${plural} "${name}" not found`);
    switch (request.method) {
      case 'GET':
        return this.#json(response, 200, existing);
      case 'DELETE':
        this.delete(resource, namespace ?? '', name);
        return this.#json(response, 200, existing);
      case 'PUT': {
        if (body?.metadata?.resourceVersion !== undefined && body.metadata.resourceVersion !== existing.metadata.resourceVersion) {
          return this.#status(
            response,
            409,
            'Conflict',
            `Operation cannot be fulfilled on ${plural} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
          );
        }
        const next = subresource === 'status' ? { ...existing, status: body?.status } : { ...body, status: existing.status };
        return this.#json(response, 200, this.#update(resource, id, next, { manager: fieldManager(request), subresource }));
      }
      case 'PATCH': {
        const type = (request.headers['content-type'] ?? '').split(';')[0];
        if (type !== 'application/merge-patch+json' && type !== 'application/strategic-merge-patch+json') {
          return this.#status(response, 415, 'UnsupportedMediaType', `unsupported patch type ${type}`);
        }
        const patched = mergePatch(existing, body) as Json;
        const next = subresource === 'status' ? { ...existing, status: patched.status } : { ...patched, status: existing.status };
        return this.#json(response, 200, this.#update(resource, id, next, { manager: fieldManager(request), subresource }));
      }
      default:
        return this.#status(response, 405, 'MethodNotAllowed', `${request.method} not allowed`);
    }
  }

  #watch(key: string, namespace: string | undefined, since: string, response: ServerResponse): void {
    response.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    // The client's request resolves only once headers arrive.
    response.flushHeaders();
    const watcher: Watcher = { resource: key, namespace, response };
    const from = Number(since);
    if (since !== '' && from < this.#compactedRv) {
      this.#write(watcher, {
        type: 'ERROR',
        object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `too old resource version: ${since} (${this.#compactedRv})`, reason: 'Expired', code: 410 },
      });
      response.end();
      return;
    }
    for (const event of this.#events) {
      if (event.resource === key && event.rv > from && matches(watcher, event.object)) {
        this.#write(watcher, { type: event.type, object: event.object });
      }
    }
    this.#watchers.add(watcher);
    response.on('close', () => this.#watchers.delete(watcher));
  }

  /** Why the kind's schema refuses the object (after pruning, as an API server validates), if it does. */
  #invalid(key: string, object: Json): string | undefined {
    return this.#validators.get(key)?.(this.#pruned(key, object));
  }

  /** Drops the fields the resource's structural schema does not declare (metadata is the server's). */
  #pruned(key: string, object: Json): Json {
    const schema = this.#schemas.get(key);
    if (schema === undefined) return object;
    const { apiVersion, kind, metadata, ...rest } = object;
    return { ...(pruneUnknownFields(rest, schema) as Json), apiVersion, kind, metadata };
  }

  #create(resource: ResourceRef, object: Json, manager: string): Json {
    const key = this.#key(resource);
    const now = this.now();
    object = this.#pruned(key, object);
    const created = {
      ...object,
      apiVersion: resource.group === '' ? resource.version : `${resource.group}/${resource.version}`,
      kind: resource.kind,
      metadata: {
        ...object.metadata,
        uid: randomUUID(),
        resourceVersion: String(++this.#rv),
        generation: 1,
        creationTimestamp: seconds(now),
        managedFields: [{ manager, operation: 'Update', apiVersion: `${resource.group}/${resource.version}`, time: seconds(now), fieldsType: 'FieldsV1' }],
      },
    };
    if (!this.#objects.has(key)) this.#objects.set(key, new Map());
    this.#objects.get(key)!.set(`${created.metadata.namespace ?? ''}/${created.metadata.name}`, created);
    this.#emit(key, 'ADDED', created);
    return created;
  }

  #update(resource: ResourceRef, id: string, next: Json, write: { manager: string; subresource: string | undefined }): Json {
    const key = this.#key(resource);
    const existing = this.#objects.get(key)!.get(id)!;
    next = this.#pruned(key, next);
    // An API server persists nothing for a write that changes nothing: no new resourceVersion, no
    // event, and no new managedFields time (kubernetes/kubernetes#88875).
    if (content(next) === content(existing)) return existing;
    const specChanged = JSON.stringify(existing.spec) !== JSON.stringify(next.spec);
    const fields = (existing.metadata.managedFields ?? []).filter(
      (entry: Json) => !(entry.manager === write.manager && entry.subresource === write.subresource),
    );
    const updated = {
      ...next,
      apiVersion: existing.apiVersion,
      kind: existing.kind,
      metadata: {
        ...existing.metadata,
        ...next.metadata,
        uid: existing.metadata.uid,
        creationTimestamp: existing.metadata.creationTimestamp,
        resourceVersion: String(++this.#rv),
        generation: existing.metadata.generation + (specChanged ? 1 : 0),
        managedFields: [
          ...fields,
          {
            manager: write.manager,
            operation: 'Update',
            apiVersion: existing.apiVersion,
            time: seconds(this.now()),
            fieldsType: 'FieldsV1',
            ...(write.subresource === undefined ? {} : { subresource: write.subresource }),
          },
        ],
      },
    };
    this.#objects.get(key)!.set(id, updated);
    this.#emit(key, 'MODIFIED', updated);
    // The last finalizer of an object being deleted is gone: now it is.
    if (updated.metadata.deletionTimestamp !== undefined && (updated.metadata.finalizers ?? []).length === 0) this.delete(resource, updated.metadata.namespace ?? '', updated.metadata.name);
    return updated;
  }

  #emit(resource: string, type: StoredEvent['type'], object: Json): void {
    const event: StoredEvent = { rv: Number(object.metadata.resourceVersion), resource, type, object };
    this.#events.push(event);
    for (const watcher of this.#watchers) {
      if (watcher.resource === resource && matches(watcher, object)) this.#write(watcher, { type, object });
    }
  }

  #write(watcher: Watcher, event: Json): void {
    watcher.response.write(`${JSON.stringify(event)}\n`);
  }

  #key(resource: ResourceRef): string {
    return `${resource.group}/${resource.plural}`;
  }

  #json(response: ServerResponse, status: number, body: unknown): void {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  }

  #status(response: ServerResponse, code: number, reason: string, message: string): void {
    this.#json(response, code, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });
  }
}

function matches(watcher: Watcher, object: Json): boolean {
  return watcher.namespace === undefined || object.metadata?.namespace === watcher.namespace;
}

function fieldManager(request: IncomingMessage): string {
  const manager = new URL(request.url ?? '/', 'http://stand-in').searchParams.get('fieldManager');
  return manager ?? (request.headers['user-agent'] ?? 'client').split('/')[0]!;
}

/** Kubernetes timestamps have second precision. */
function seconds(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** RFC 7386 JSON merge patch. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const result: Json = typeof target === 'object' && target !== null && !Array.isArray(target) ? { ...(target as Json) } : {};
  for (const [key, value] of Object.entries(patch as Json)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

async function readJson(request: IncomingMessage): Promise<Json | undefined> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? undefined : (JSON.parse(text) as Json);
}

/**
 * Structural pruning, as an API server applies it to custom resources: an object schema keeps the
 * properties it declares (and, with additionalProperties, every key pruned to that schema); a node
 * marked x-kubernetes-preserve-unknown-fields keeps everything; arrays are pruned item by item.
 */
export function pruneUnknownFields(value: unknown, schema: Json): unknown {
  if (schema['x-kubernetes-preserve-unknown-fields'] === true || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return schema.items === undefined ? value : value.map((item) => pruneUnknownFields(item, schema.items));
  const kept: Json = {};
  for (const [name, child] of Object.entries(value)) {
    const declared = schema.properties?.[name] ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
    // A null where the schema does not allow one is dropped before validation (a YAML `spec:` left empty).
    if (declared !== undefined && !(child === null && declared.nullable !== true)) kept[name] = pruneUnknownFields(child, declared);
  }
  return kept;
}

/** An object as written by its users: everything but what the server stamps, keys in a fixed order. */
function content(object: Json): string {
  const { resourceVersion: _version, managedFields: _fields, generation: _generation, ...metadata } = object.metadata ?? {};
  return canonical({ ...object, metadata });
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  const entries = Object.entries(value).filter(([, child]) => child !== undefined);
  return `{${entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([name, child]) => `${JSON.stringify(name)}:${canonical(child)}`).join(',')}}`;
}
