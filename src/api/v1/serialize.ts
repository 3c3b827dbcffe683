// Report objects carry Dates; on the wire they are ISO strings (JSON.stringify's own conversion).
// This type states that for the typed routes without copying the data.
export type Serialized<T> = T extends Date
  ? string
  : T extends readonly (infer U)[]
    ? Serialized<U>[]
    : T extends object
      ? { [K in keyof T]: Serialized<T[K]> }
      : T;

export function serialized<T>(value: T): Serialized<T> {
  return value as unknown as Serialized<T>;
}
