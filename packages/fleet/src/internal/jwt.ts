/**
 * NATS JWTs of an operator deployment (decentralized auth), made with nkeys: an operator signs accounts, an
 * account signs its users, each JWT base64url JSON claims signed (ed25519) by its issuer's key. For test
 * fleets; a deployment makes them with the NATS tools (`nsc`).
 */
import type { KeyPair } from "@nats-io/nkeys"
import * as crypto from "node:crypto"

const base64url = (bytes: Uint8Array | string) => Buffer.from(bytes).toString("base64url")

const header = base64url(JSON.stringify({ typ: "JWT", alg: "ed25519-nkey" }))

/** A JWT of `subject` (a public key) issued at `issuedAtMs` and signed by `issuer`, with its `nats` claims. */
export const encode = (
  issuer: KeyPair,
  subject: string,
  name: string,
  nats: Readonly<Record<string, unknown>>,
  issuedAtMs: number
): string => {
  const claims = {
    jti: crypto.randomBytes(20).toString("hex").toUpperCase(),
    iat: Math.floor(issuedAtMs / 1000),
    iss: issuer.getPublicKey(),
    name,
    sub: subject,
    nats: { ...nats, version: 2 }
  }
  const payload = base64url(JSON.stringify(claims))
  const signature = issuer.sign(new TextEncoder().encode(`${header}.${payload}`))
  return `${header}.${payload}.${base64url(signature)}`
}

/** No limit, as a JWT's limits say it. */
const unlimited = -1

/** An account's limits: none, and JetStream when `jetStream`. */
export const accountLimits = (jetStream: boolean) => ({
  subs: unlimited,
  data: unlimited,
  payload: unlimited,
  imports: unlimited,
  exports: unlimited,
  wildcards: true,
  conn: unlimited,
  leaf: unlimited,
  ...(jetStream ? { mem_storage: unlimited, disk_storage: unlimited, streams: unlimited, consumer: unlimited } : {})
})

/** A user's permissions: what it may publish and subscribe to, and the replies it may send. */
export interface Permissions {
  readonly publish: ReadonlyArray<string>
  readonly subscribe: ReadonlyArray<string>
  readonly responses?: { readonly max: number; readonly ttlMs: number } | undefined
}

/** A user's claims: its permissions (none given: everything). */
export const userClaims = (permissions: Permissions | undefined) => ({
  type: "user",
  subs: unlimited,
  data: unlimited,
  payload: unlimited,
  ...(permissions === undefined ? {} : {
    pub: { allow: permissions.publish },
    sub: { allow: permissions.subscribe },
    ...(permissions.responses === undefined
      ? {}
      : { resp: { max: permissions.responses.max, ttl: permissions.responses.ttlMs * 1_000_000 } })
  })
})

/** A `.creds` file's text: the user's JWT and its nkey seed. */
export const credsText = (jwt: string, seed: string): string =>
  [
    "-----BEGIN NATS USER JWT-----",
    jwt,
    "------END NATS USER JWT------",
    "",
    "************************* IMPORTANT *************************",
    "NKEY Seed printed below can be used to sign and prove identity.",
    "NKEYs are sensitive and should be treated as secrets.",
    "",
    "-----BEGIN USER NKEY SEED-----",
    seed,
    "------END USER NKEY SEED------",
    ""
  ].join("\n")
