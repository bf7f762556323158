import * as fs from "node:fs"
import * as path from "node:path"

/** A regular file this process may execute. */
export const executable = (file: string): boolean => {
  try {
    fs.accessSync(file, fs.constants.X_OK)
    return fs.statSync(file).isFile()
  } catch {
    return false
  }
}

/** Where `file` would be found by exec: a path (relative to `cwd`) as is, a bare name along `PATH`. */
export const findProgram = (file: string, searchPath: string, cwd: string): string | undefined => {
  if (file.includes("/")) {
    const resolved = path.resolve(cwd, file)
    return executable(resolved) ? resolved : undefined
  }
  for (const dir of searchPath.split(":")) {
    if (dir !== "" && executable(path.join(dir, file))) return path.join(dir, file)
  }
  return undefined
}
