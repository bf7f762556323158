/**
 * Owner credentials: an owner name and a secret. The daemon stores only a salted scrypt hash of each
 * secret (so its database does not hand out the secrets) and compares hashes in constant time. A secret
 * is either configured by the client (`--owner-secret-file`, `AGENT_TERMINAL_OWNER_SECRET`) or issued by the
 * daemon the first time a name is used without one (256 random bits, returned once).
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import * as crypto from "node:crypto"

/**
 * What the registry keeps of a secret.
 *
 * @since 0.2.0
 */
export interface SecretHash {
  /** `scrypt:N:r:p` — how `hash` was derived, so the parameters can change without breaking stored ones. */
  readonly scheme: string
  /** Base64 of the random salt. */
  readonly salt: string
  /** Base64 of the derived key. */
  readonly hash: string
}

const N = 16384
const R = 8
const P = 1
const KEY_BYTES = 32
const scheme = `scrypt:${N}:${R}:${P}`

const derive = (secret: string, salt: Buffer, params: { n: number; r: number; p: number }): Effect.Effect<Buffer> =>
  Effect.async<Buffer>((resume) => {
    crypto.scrypt(
      secret,
      salt,
      KEY_BYTES,
      { N: params.n, r: params.r, p: params.p, maxmem: 64 * 1024 * 1024 },
      (error, key) => resume(error === null ? Effect.succeed(key) : Effect.die(error))
    )
  })

/**
 * A new random secret (256 bits, base64url).
 *
 * @since 0.2.0
 */
export const issueSecret = (): string => crypto.randomBytes(32).toString("base64url")

/**
 * Hash a secret with a fresh salt.
 *
 * @since 0.2.0
 */
export const hashSecret = (secret: string): Effect.Effect<SecretHash> =>
  Effect.suspend(() => {
    const salt = crypto.randomBytes(16)
    return derive(secret, salt, { n: N, r: R, p: P }).pipe(
      Effect.map((key) => ({ scheme, salt: salt.toString("base64"), hash: key.toString("base64") }))
    )
  })

/**
 * Whether `secret` is the one `stored` was made from: the same derivation, compared in constant time. An
 * unknown scheme never verifies.
 *
 * @since 0.2.0
 */
export const verifySecret = (secret: string, stored: SecretHash): Effect.Effect<boolean> =>
  Effect.suspend(() => {
    const match = /^scrypt:(\d+):(\d+):(\d+)$/.exec(stored.scheme)
    if (match === null) return Effect.succeed(false)
    const expected = Buffer.from(stored.hash, "base64")
    return derive(secret, Buffer.from(stored.salt, "base64"), {
      n: Number(match[1]),
      r: Number(match[2]),
      p: Number(match[3])
    }).pipe(Effect.map((key) => key.length === expected.length && crypto.timingSafeEqual(key, expected)))
  })
