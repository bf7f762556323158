/**
 * One declaration per operation: its tag on the wire, its arguments after the owner (each a name and a
 * Schema), its success and error Schemas, and what the transports need to know about it. The service types
 * (`PtyService`, `Tasks`, `Exec`), the entry checks (`PtyService.checked`), the daemon's `RpcGroup`, its
 * handlers and the remote client are all derived from these declarations, so an operation is declared once
 * and implemented once.
 *
 * @since 0.4.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Schema from "effect/Schema"
import type { InvalidInput } from "./Errors.js"
import type { OwnerId } from "./Ids.js"
import * as Validation from "./Validation.js"

/**
 * One argument of an operation: its name (the payload field on the wire), its Schema, whether it may be
 * left out, and, when the Schema alone does not say it, the check the service applies at its entry.
 *
 * @since 0.4.0
 * @category declarations
 */
export interface Arg<N extends string, S extends Schema.Schema.AnyNoContext, O extends boolean> {
  readonly name: N
  readonly schema: S
  readonly optional: O
  /** The entry check of this argument; default: decoded by `schema` (unknown fields refused). */
  readonly check?: ((value: unknown) => Either.Either<Schema.Schema.Type<S>, InvalidInput>) | undefined
}

/**
 * Any argument.
 *
 * @since 0.4.0
 * @category declarations
 */
export type AnyArg = Arg<string, Schema.Schema.AnyNoContext, boolean>

/**
 * A required argument.
 *
 * @since 0.4.0
 * @category declarations
 */
export const arg = <const N extends string, S extends Schema.Schema.AnyNoContext>(
  name: N,
  schema: S,
  options: { readonly check?: Arg<N, S, false>["check"] } = {}
): Arg<N, S, false> => ({ name, schema, optional: false, check: options.check })

/**
 * An argument that may be left out.
 *
 * @since 0.4.0
 * @category declarations
 */
export const optionalArg = <const N extends string, S extends Schema.Schema.AnyNoContext>(
  name: N,
  schema: S,
  options: { readonly check?: Arg<N, S, true>["check"] } = {}
): Arg<N, S, true> => ({ name, schema, optional: true, check: options.check })

/**
 * An operation: what a service method, an RPC, its handler and its remote call are derived from.
 *
 * @since 0.4.0
 * @category declarations
 */
export interface Operation<
  Tag extends string,
  Args extends ReadonlyArray<AnyArg>,
  S extends Schema.Schema.AnyNoContext,
  E extends ReadonlyArray<Schema.Schema.AnyNoContext>
> {
  /** Its name on the wire (the RPC's tag). */
  readonly tag: Tag
  readonly args: Args
  readonly success: S
  readonly errors: E
  /**
   * Its arguments are checked at the service's entry (`PtyService.checked`); `false` for an operation whose
   * arguments the implementation checks itself, or that has nothing to check.
   */
  readonly checked: boolean
  /**
   * Work that goes on when the caller's connection ends (a send keeps its command running, as a person's
   * terminal does when the window closes); only the caller's own cancel stops it. A daemon runs it detached
   * for a named owner.
   */
  readonly detached: boolean
}

/**
 * Any operation.
 *
 * @since 0.4.0
 * @category declarations
 */
export type Any = Operation<
  string,
  ReadonlyArray<AnyArg>,
  Schema.Schema.AnyNoContext,
  ReadonlyArray<Schema.Schema.AnyNoContext>
>

/**
 * Declare an operation.
 *
 * @since 0.4.0
 * @category declarations
 */
export const make = <
  const Tag extends string,
  const Args extends ReadonlyArray<AnyArg>,
  S extends Schema.Schema.AnyNoContext,
  const E extends ReadonlyArray<Schema.Schema.AnyNoContext> = readonly []
>(
  tag: Tag,
  spec: {
    readonly args: Args
    readonly success: S
    readonly errors?: E | undefined
    readonly checked?: boolean | undefined
    readonly detached?: boolean | undefined
  }
): Operation<Tag, Args, S, E> => ({
  tag,
  args: spec.args,
  success: spec.success,
  errors: spec.errors ?? ([] as unknown as E),
  checked: spec.checked ?? true,
  detached: spec.detached ?? false
})

/**
 * The argument types of a declaration's arguments, in order (optional where the argument is).
 *
 * @since 0.4.0
 * @category derivations
 */
export type ArgTypes<Args> = Args extends readonly [infer H, ...infer T]
  ? H extends Arg<string, infer S, infer O>
    ? O extends true ? [value?: Schema.Schema.Type<S> | undefined, ...ArgTypes<T>]
    : [value: Schema.Schema.Type<S>, ...ArgTypes<T>]
  : never
  : []

/**
 * The union of the types of a list of error Schemas.
 *
 * @since 0.4.0
 * @category derivations
 */
export type ErrorOf<E> = E extends ReadonlyArray<infer S> ? S extends Schema.Schema.Any ? Schema.Schema.Type<S> : never
  : never

/**
 * The service method of a declaration: the owner first, then its arguments.
 *
 * @since 0.4.0
 * @category derivations
 */
export type Method<Op> = Op extends Operation<string, infer Args, infer S, infer E>
  ? (owner: OwnerId, ...args: ArgTypes<Args>) => Effect.Effect<Schema.Schema.Type<S>, ErrorOf<E>>
  : never

/**
 * A table of declarations, keyed by the service's method names.
 *
 * @since 0.4.0
 * @category declarations
 */
export type Table = { readonly [method: string]: Any }

/**
 * The service a table declares: one method per declaration (the declaration's documentation is the
 * method's).
 *
 * @since 0.4.0
 * @category derivations
 */
export type ServiceOf<Ops extends Table> = { readonly [K in keyof Ops]: Method<Ops[K]> }

/**
 * A call's payload on the wire: each argument under its name, absent ones left out (the shape the daemon's
 * `RpcGroup` declares for the operation). Shared by every remote client of the operations.
 *
 * @since 0.4.0
 * @category derivations
 */
export const payloadOf = (operation: Any, args: ReadonlyArray<unknown>): Record<string, unknown> => {
  const payload: Record<string, unknown> = {}
  for (let index = 0; index < operation.args.length; index++) {
    if (args[index] !== undefined) payload[operation.args[index]!.name] = args[index]
  }
  return payload
}

/**
 * An argument's entry check: its own `check`, or its Schema's decoder.
 *
 * @since 0.4.0
 * @category derivations
 */
export const checkOf = (argument: AnyArg): (value: unknown) => Either.Either<unknown, InvalidInput> => {
  if (argument.check !== undefined) return argument.check
  const decode = Validation.decoder(argument.schema as Schema.Schema<unknown, unknown>, { root: argument.name })
  return argument.optional ? (value) => value === undefined ? Either.right(value) : decode(value) : decode
}

type Untyped = (owner: OwnerId, ...args: ReadonlyArray<unknown>) => Effect.Effect<unknown, unknown>

/**
 * A further check of an operation's (already checked) arguments, e.g. the input size of a send against the
 * settings.
 *
 * @since 0.4.0
 * @category derivations
 */
export type Refine = (first: unknown, second: unknown) => InvalidInput | undefined

/**
 * The method with every argument checked at its entry: the first failure is the call's `InvalidInput`,
 * then `refine`, if any. One closure per arity, so a call allocates nothing beyond its checks.
 */
const checkedMethod = (operation: Any, method: Untyped, refine: Refine | undefined): Untyped => {
  const checks = operation.args.map(checkOf)
  switch (checks.length) {
    case 0:
      return method
    case 1: {
      const [first] = checks as [(value: unknown) => Either.Either<unknown, InvalidInput>]
      return (owner, a) => {
        const valid = first(a)
        if (Either.isLeft(valid)) return Effect.fail(valid.left)
        const refused = refine?.(valid.right, undefined)
        return refused !== undefined ? Effect.fail(refused) : method(owner, valid.right)
      }
    }
    case 2: {
      const [first, second] = checks as [
        (value: unknown) => Either.Either<unknown, InvalidInput>,
        (value: unknown) => Either.Either<unknown, InvalidInput>
      ]
      return (owner, a, b) => {
        const validA = first(a)
        if (Either.isLeft(validA)) return Effect.fail(validA.left)
        const validB = second(b)
        if (Either.isLeft(validB)) return Effect.fail(validB.left)
        const refused = refine?.(validA.right, validB.right)
        return refused !== undefined ? Effect.fail(refused) : method(owner, validA.right, validB.right)
      }
    }
    default:
      return (owner, ...args) => {
        const valid: Array<unknown> = []
        for (let index = 0; index < checks.length; index++) {
          const result = checks[index]!(args[index])
          if (Either.isLeft(result)) return Effect.fail(result.left)
          valid.push(result.right)
        }
        const refused = refine?.(valid[0], valid[1])
        return refused !== undefined ? Effect.fail(refused) : method(owner, ...valid)
      }
  }
}

/**
 * A service with the arguments of every declaration marked `checked` checked at its entry (the others, and
 * members that are not operations, as they are). An `InvalidInput` must be among the declared errors of
 * each checked operation.
 *
 * @since 0.4.0
 * @category derivations
 */
export const checked = <Ops extends Table, Service extends ServiceOf<Ops>>(
  operations: Ops,
  service: Service,
  refine: { readonly [K in keyof Ops]?: Refine } = {}
): Service => {
  const result: Record<string, unknown> = { ...service }
  for (const [name, operation] of Object.entries(operations)) {
    if (!operation.checked) continue
    result[name] = checkedMethod(operation, (service as unknown as Record<string, Untyped>)[name]!, refine[name])
  }
  return result as Service
}
