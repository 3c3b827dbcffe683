// What an API server would say of a rendered object's shape, offline: the Kubernetes OpenAPI
// schemas as `kubernetes-models` ships them compiled (types, required fields, formats, enums; the
// Kubernetes 1.3x API, and prometheus-operator's for ServiceMonitor and PrometheusRule), plus the
// unknown fields a strict apply refuses (`kubectl apply` validates strictly; a misindented key
// would otherwise vanish without a word), found through @kubernetes/client-node's model of every
// built-in kind (its attribute type maps, generated from the same OpenAPI document).
import * as k8s from '@kubernetes/client-node';

interface KubeObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly [field: string]: unknown;
}

interface Model {
  validate(): void;
}
type ModelClass = new (data: unknown) => Model;

/** The kubernetes-models class of an apiVersion and kind. */
async function modelOf(apiVersion: string, kind: string): Promise<ModelClass> {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  const module: Record<string, unknown> =
    group === 'monitoring.coreos.com'
      ? await import(`@kubernetes-models/prometheus-operator/${group}/${version}/${kind}`)
      : await import(group === '' ? `kubernetes-models/${version}/${kind}` : `kubernetes-models/${group}/${version}/${kind}`);
  const model = module[kind];
  if (typeof model !== 'function') throw new Error(`no schema for ${apiVersion} ${kind}`);
  return model as ModelClass;
}

/** The client-node model name of a built-in kind: apps/v1 Deployment → V1Deployment. */
function clientModelName(apiVersion: string, kind: string): string {
  const version = apiVersion.split('/').at(-1)!;
  return `${version.charAt(0).toUpperCase()}${version.slice(1)}${kind}`;
}

type AttributeMap = readonly { readonly baseName: string; readonly type: string }[];
const models = k8s as unknown as Record<string, { getAttributeTypeMap?: () => AttributeMap } | undefined>;
const OPAQUE = new Set(['string', 'number', 'boolean', 'Date', 'any', 'object', 'IntOrString']);

/** Fields of `value` that the type `type` does not have, as paths. */
function unknownFields(value: unknown, type: string, at: string): string[] {
  if (value === null || value === undefined || OPAQUE.has(type)) return [];
  const array = /^Array<(.+)>$/.exec(type);
  if (array !== null) return Array.isArray(value) ? value.flatMap((item, index) => unknownFields(item, array[1]!, `${at}[${index}]`)) : [];
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map !== null) return typeof value === 'object' ? Object.entries(value).flatMap(([key, item]) => unknownFields(item, map[1]!, `${at}.${key}`)) : [];
  const attributes = models[type]?.getAttributeTypeMap?.();
  if (attributes === undefined) throw new Error(`${at}: no model of ${type}`);
  if (typeof value !== 'object') return [];
  const known = new Map(attributes.map((attribute) => [attribute.baseName, attribute.type]));
  return Object.entries(value).flatMap(([field, item]) => {
    const fieldType = known.get(field);
    return fieldType === undefined ? [`${at}.${field}: unknown field`] : unknownFields(item, fieldType, `${at}.${field}`);
  });
}

/** The problems an API server would find with `object`'s shape; [] when it would take it. */
export async function kubeSchemaErrors(object: KubeObject): Promise<string[]> {
  const name = `${object.kind} ${String((object['metadata'] as { name?: string } | undefined)?.name)}`;
  const problems: string[] = [];
  try {
    new (await modelOf(object.apiVersion, object.kind))(object).validate();
  } catch (error) {
    problems.push(`${name}: ${(error as Error).message}`);
  }
  // ServiceMonitor and PrometheusRule: their models are compiled validators with no list of fields
  // to compare against, so only the schema's own checks apply.
  if (!object.apiVersion.startsWith('monitoring.coreos.com/')) {
    problems.push(...unknownFields(object, clientModelName(object.apiVersion, object.kind), name));
  }
  return problems;
}
