/**
 * One spelling of every request path. `HttpGuard` decides what credential a request needs from its path,
 * and the router decides which route serves it: if the two read a path differently, a spelling the guard
 * takes for one route (`//mcp`, `/MCP`, `/%6dcp`, `/live/login;x`, `/live/login/`) is served by another, and
 * a cookie meant for the live view reaches MCP. So a path is refused unless it is already in the one form
 * both agree on, before any credential is looked at, and the router is told to match only that form
 * (`routerConfig`: exact case, no slash trimmed or merged).
 *
 * @since 0.3.0
 */

/**
 * Why a request target is not canonical: a 400 (a malformed or ambiguous spelling) or a 404 (a trailing
 * slash: no route of these servers has one).
 *
 * @since 0.3.0
 */
export interface NotCanonical {
  readonly status: 400 | 404
  readonly reason: string
}

/**
 * The router's settings that match paths exactly as they are spelled (find-my-way's defaults trim a
 * trailing slash, merge repeated ones and ignore case).
 *
 * @since 0.3.0
 */
export const routerConfig = {
  caseSensitive: true,
  ignoreTrailingSlash: false,
  ignoreDuplicateSlashes: false
} as const

const isHex = (code: number) => (code >= 48 && code <= 57) || (code >= 65 && code <= 70) || (code >= 97 && code <= 102)

/** RFC 3986 §2.3: an unreserved character is never percent-encoded in a canonical URI. */
const isUnreserved = (code: number) =>
  (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || (code >= 48 && code <= 57) || code === 45 ||
  code === 46 || code === 95 || code === 126

const bad = (reason: string): NotCanonical => ({ status: 400, reason: `Bad Request: ${reason}` })

/**
 * The path of a request target (what comes before `?`), or why it is refused: not in origin form (`/…`),
 * a fragment, a repeated slash, a dot segment, a `;` parameter, a malformed percent sign, a
 * percent-encoded unreserved character or `/`, or a trailing slash (404).
 *
 * @since 0.3.0
 */
export const canonical = (url: string): string | NotCanonical => {
  if (url.charCodeAt(0) !== 47) return bad("the request target must be a path (origin form: /…)")
  const query = url.indexOf("?")
  const path = query === -1 ? url : url.slice(0, query)
  if (path.includes("#")) return bad("a request target has no fragment")
  if (path.includes("//")) return bad("the path repeats a slash")
  if (path.includes(";")) return bad("the path carries a ; parameter")
  for (let at = 0; at < path.length; at++) {
    if (path.charCodeAt(at) !== 37) continue
    const high = path.charCodeAt(at + 1)
    const low = path.charCodeAt(at + 2)
    if (!isHex(high) || !isHex(low)) return bad("the path has a malformed percent-encoding")
    const code = Number.parseInt(path.slice(at + 1, at + 3), 16)
    if (isUnreserved(code) || code === 47) return bad("the path percent-encodes a character that needs no encoding")
    at += 2
  }
  for (const segment of path.split("/")) {
    if (segment === "." || segment === "..") return bad("the path has a dot segment")
  }
  if (path.length > 1 && path.endsWith("/")) return { status: 404, reason: "Not Found" }
  return path
}
