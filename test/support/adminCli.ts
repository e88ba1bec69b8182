import { spawn } from "node:child_process"
import { adminCommand } from "./serviceBuild.js"

/**
 * Runs `npm run admin -- <args>` as its own process with only the given environment (and
 * PATH), `stdin` written to its standard input; answers its exit code and output.
 */
export const runAdminCli = (env: Record<string, string>, args: ReadonlyArray<string>, stdin = "") =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve, reject) => {
    const [node, ...commandArgs] = adminCommand(args)
    const child = spawn(node, commandArgs, {
      cwd: process.cwd(),
      env: { PATH: process.env["PATH"] ?? "", ...env },
      stdio: ["pipe", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }))
    child.stdin.end(stdin)
  })
