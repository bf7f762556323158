/** A certificate authority and the certificates it signs, made with `openssl` for a test fleet's TLS. */
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

const openssl = (dir: string, args: ReadonlyArray<string>) =>
  childProcess.execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] })

const EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]

/** The files of a CA: its certificate and key. */
export interface Authority {
  readonly certFile: string
  readonly keyFile: string
}

/** A certificate and its key. */
export interface Certificate {
  readonly certFile: string
  readonly keyFile: string
}

/** A new CA named `name` in `dir`, valid for a day. */
export const authority = (dir: string, name: string): Authority => {
  const certFile = path.join(dir, `${name}.pem`)
  const keyFile = path.join(dir, `${name}.key`)
  openssl(dir, ["req", "-x509", ...EC, "-keyout", keyFile, "-out", certFile, "-days", "1", "-subj", `/CN=${name}`])
  return { certFile, keyFile }
}

/**
 * A certificate `name` signed by `ca`: for a server, with its IP addresses and host names as subject
 * alternative names; for a client, with the client-auth usage.
 */
export const sign = (
  dir: string,
  ca: Authority,
  name: string,
  kind: { readonly server: { readonly ips: ReadonlyArray<string>; readonly dns: ReadonlyArray<string> } } | "client"
): Certificate => {
  const certFile = path.join(dir, `${name}.pem`)
  const keyFile = path.join(dir, `${name}.key`)
  const request = path.join(dir, `${name}.csr`)
  const extensions = path.join(dir, `${name}.ext`)
  fs.writeFileSync(
    extensions,
    kind === "client"
      ? "extendedKeyUsage=clientAuth\n"
      : `subjectAltName=${
        [...kind.server.ips.map((ip) => `IP:${ip}`), ...kind.server.dns.map((dns) => `DNS:${dns}`)].join(",")
      }\nextendedKeyUsage=serverAuth\n`
  )
  openssl(dir, ["req", ...EC, "-keyout", keyFile, "-out", request, "-subj", `/CN=${name}`])
  openssl(dir, [
    "x509",
    "-req",
    "-in",
    request,
    "-CA",
    ca.certFile,
    "-CAkey",
    ca.keyFile,
    "-CAcreateserial",
    "-out",
    certFile,
    "-days",
    "1",
    "-extfile",
    extensions
  ])
  fs.chmodSync(keyFile, 0o600)
  return { certFile, keyFile }
}
