import { execFile } from "node:child_process"
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { builtinModules } from "node:module"
import { dirname, join, relative, resolve } from "node:path"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"
import { mcpChallenge } from "../../src/Http/Mcp/ProtectedResource.js"

/**
 * The documents' code, as a reader copies it: README.md, docs/*.md, the clients', the
 * contract's and the examples' READMEs. In every snippet (fenced block or inline code) each
 * npm package imported or installed is one of the repository's workspaces or dependencies,
 * each `npm run X` a script of the package it runs in, each `npx` command a local binary (or,
 * fetched with `-y`, a package of the repository), each tarball one the workspaces pack, each
 * `pip install` the Python client's folder (with its extras), each Python import a module
 * and names that exist, and each file a command runs is there. No server is started.
 */
const root = resolve(new URL("../../", import.meta.url).pathname)
const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8"))
const rootManifest = readJson(join(root, "package.json"))

const documents = [
  "README.md",
  ...readdirSync(join(root, "docs")).filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`),
  ...["clients", "packages", "examples"].flatMap((folder) =>
    readdirSync(join(root, folder), { recursive: true, encoding: "utf8" })
      .filter((path) => path.endsWith("README.md") && !path.includes("node_modules"))
      .map((path) => `${folder}/${path}`)
  )
]

// ---------------------------------------------------------------------------------------
// Snippets

interface Snippet {
  readonly doc: string
  readonly lang: string
  readonly code: string
}

/** Fenced blocks (their indentation removed) and inline code spans (one line each). */
const snippetsOf = (doc: string): Array<Snippet> => {
  const lines = readFileSync(join(root, doc), "utf8").split("\n")
  const snippets: Array<Snippet> = []
  const prose: Array<string> = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(```+|~~~+)\s*([\w-]*)/.exec(lines[i]!)
    if (open === null) {
      prose.push(lines[i]!)
      continue
    }
    const [, indent, fence, lang] = open
    const body: Array<string> = []
    for (i++; i < lines.length && !lines[i]!.trim().startsWith(fence!); i++) {
      body.push(lines[i]!.startsWith(indent!) ? lines[i]!.slice(indent!.length) : lines[i]!)
    }
    snippets.push({ doc, lang: lang!.toLowerCase(), code: body.join("\n") })
    prose.push("")
  }
  // An inline span may wrap lines but not cross a paragraph.
  for (const paragraph of prose.join("\n").split(/\n\s*\n/)) {
    for (const [, , code] of paragraph.matchAll(/(`+)([^`][\s\S]*?)\1(?!`)/g)) {
      snippets.push({ doc, lang: "inline", code: code!.replace(/\s*\n\s*/g, " ").trim() })
    }
  }
  return snippets
}

const snippets = documents.flatMap(snippetsOf)

// ---------------------------------------------------------------------------------------
// What the repository has

const workspaces: Array<string> = rootManifest.workspaces
const manifestOf = (dir: string) => {
  const path = join(dir, "package.json")
  return existsSync(path) ? readJson(path) : undefined
}
const workspaceManifests = workspaces.map((folder) => ({
  folder,
  manifest: readJson(join(root, folder, "package.json"))
}))
const knownPackages = new Set<string>([
  rootManifest.name,
  ...Object.keys(rootManifest.dependencies),
  ...Object.keys(rootManifest.devDependencies),
  ...workspaceManifests.flatMap(({ manifest }) => [
    manifest.name,
    ...Object.keys(manifest.dependencies ?? {}),
    ...Object.keys(manifest.devDependencies ?? {})
  ])
])
/** The tarballs `npm pack` makes of the workspaces, by name. */
const packedTarballs = new Map(
  workspaceManifests.map(({ folder, manifest }) => [
    `${String(manifest.name).replace(/^@/, "").replace("/", "-")}-${manifest.version}.tgz`,
    folder
  ])
)
const workspaceBins = new Set(workspaceManifests.flatMap(({ manifest }) => Object.keys(manifest.bin ?? {})))
const localBin = (name: string) => existsSync(join(root, "node_modules/.bin", name))

const packageNameOf = (specifier: string) => /^(@[^/]+\/)?[^/@]+/.exec(specifier)?.[0] ?? specifier
const isBuiltin = (specifier: string) =>
  specifier.startsWith("node:") || builtinModules.includes(packageNameOf(specifier))

const pythonProject = join(root, "clients/python")
/** The extras `[project.optional-dependencies]` of clients/python/pyproject.toml declares. */
const pythonExtras = [
  ...(/\[project\.optional-dependencies\]\n([\s\S]*?)(?:\n\[|$)/.exec(
    readFileSync(join(pythonProject, "pyproject.toml"), "utf8")
  )?.[1] ?? "").matchAll(/^(\w[\w-]*)\s*=/gm)
].map((match) => match[1]!)

// ---------------------------------------------------------------------------------------
// Checks

/** A repository path a command or import names: inside the repository, found as written or as its `.ts` source. */
const repositoryFileExists = (from: string, path: string) => {
  const candidates = [resolve(from, path), resolve(from, path.replace(/\.js$/, ".ts"))]
  return candidates.some((candidate) => candidate.startsWith(root) && existsSync(candidate))
}

const wordsOf = (command: string) =>
  [...command.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((match) => match[1] ?? match[2] ?? match[3]!)

/** Shell lines of a snippet: continuations joined, comments dropped, split at `&&`, `;`, `|`, parentheses. */
const commandsOf = (code: string): Array<Array<string>> =>
  code.replace(/\\\n/g, " ").split("\n").flatMap((line) =>
    line.replace(/(^|\s)#.*$/, "").split(/&&|\|\||;|\||\(|\)/).map((part) =>
      wordsOf(part.trim()).filter((word, index, words) =>
        // Leading variable assignments (KEY=value command) are not the command.
        !(/^[A-Z_][A-Z0-9_]*=/.test(word) && words.slice(0, index).every((w) => /^[A-Z_][A-Z0-9_]*=/.test(w)))
      )
    )
  ).filter((words) => words.length > 0)

/** A path written as a placeholder (`.../bridge.ts`, `/absolute/path/...`, `<dir>`). */
const isPlaceholder = (path: string) => /\.\.\.|<|^\/absolute\//.test(path)

/**
 * The problems of one command run in `cwd` (a repository folder, or null once it left the
 * repository); a script may also be the document's own package's (`home`), when no `cd` said
 * where it runs.
 */
const checkCommand = (words: Array<string>, cwd: string | null, home: string = root): Array<string> => {
  const [tool, ...rest] = words
  const args = rest.filter((word) => !word.startsWith("-"))
  const problems: Array<string> = []
  if (tool === "npm" && cwd !== null) {
    const prefix = rest.indexOf("--prefix")
    const dir = prefix >= 0 ? resolve(cwd, rest[prefix + 1]!) : cwd
    const [verb, ...targets] = args.filter((word) => !(prefix >= 0 && word === rest[prefix + 1]))
    const scripts = { ...(dir === root ? manifestOf(home)?.scripts : {}), ...manifestOf(dir)?.scripts }
    if ((verb === "run" || verb === "run-script") && targets[0] !== undefined) {
      if (!(targets[0] in scripts)) {
        problems.push(`npm run ${targets[0]}: no such script in ${relative(root, dir) || "."}`)
      }
    } else if (verb === "start" || verb === "test" || verb === "t") {
      const script = verb === "t" ? "test" : verb
      if (!(script in scripts)) problems.push(`npm ${verb}: no such script in ${relative(root, dir) || "."}`)
    } else if (verb === "install" || verb === "i" || verb === "add") {
      for (const target of targets) {
        if (/\.tgz$/.test(target)) {
          const name = target.split("/").pop()!
          const pattern = new RegExp(`^${name.replace(/[.+]/g, "\\$&").replace(/\*/g, ".*")}$`)
          if (![...packedTarballs.keys()].some((tarball) => pattern.test(tarball))) {
            problems.push(`npm install ${target}: no workspace packs that tarball`)
          }
        } else if (!/^[./]/.test(target) && !knownPackages.has(packageNameOf(target))) {
          problems.push(`npm install ${target}: not a package of the repository`)
        }
      }
    }
  }
  if (tool === "npx") {
    const packages = rest.flatMap((word, index) =>
      word.startsWith("--package=") ?
        [word.slice("--package=".length)]
        : (word === "-p" || word === "--package") ?
        [rest[index + 1]!]
        : []
    )
    const fetches = rest.includes("-y") || rest.includes("--yes")
    const command = rest.find((word, index) => !word.startsWith("-") && !["-p", "--package"].includes(rest[index - 1]!))
    for (const name of packages) {
      if (!knownPackages.has(packageNameOf(name))) {
        problems.push(`npx --package=${name}: not a package of the repository`)
      }
    }
    if (command !== undefined && packages.length === 0) {
      // With -y npx fetches the command's name from the registry wherever it runs.
      if (fetches ? !knownPackages.has(packageNameOf(command)) : !(localBin(command) || knownPackages.has(command))) {
        problems.push(
          `npx ${fetches ? "-y " : ""}${command}: ${
            fetches ? "no package of the repository" : "no such command"
          } has that name`
        )
      }
    }
    const script = rest.find((word) => /^[\w./-]+\.(ts|mjs|js)$/.test(word))
    if (
      command === "tsx" && script !== undefined && !isPlaceholder(script) && cwd !== null &&
      !repositoryFileExists(cwd, script)
    ) {
      problems.push(`npx tsx ${script}: no such file`)
    }
  }
  const pip = tool === "pip" || tool === "pip3" ?
    rest
    : /^python3?$/.test(tool!) && rest[0] === "-m" && rest[1] === "pip" ?
    rest.slice(2)
    : undefined
  if (pip !== undefined && pip[0] === "install") {
    for (const target of pip.slice(1).filter((word) => !word.startsWith("-"))) {
      const [, path, extras] = /^([^[]+)(?:\[([^\]]*)\])?$/.exec(target) ?? []
      const folder = cwd === null ? undefined : resolve(cwd, path!)
      if (!/^[./]/.test(path!) || folder !== pythonProject) {
        problems.push(
          `pip install ${target}: the Python client installs from its folder (clients/python), it is published nowhere`
        )
      }
      for (const extra of (extras ?? "").split(",").filter((e) => e.length > 0)) {
        if (!pythonExtras.includes(extra)) problems.push(`pip install ${target}: clients/python has no extra ${extra}`)
      }
    }
  }
  const pyScript = args[0]
  if (
    /^python3?$/.test(tool!) && pyScript?.endsWith(".py") && !isPlaceholder(pyScript) && cwd !== null &&
    !repositoryFileExists(cwd, pyScript)
  ) {
    problems.push(`python3 ${pyScript}: no such file`)
  }
  return problems
}

/** Every command of a snippet, following its `cd`s from the repository's root. */
const checkShell = (code: string, home: string): Array<string> => {
  let cwd: string | null = root
  const problems: Array<string> = []
  for (const words of commandsOf(code)) {
    if (words[0] === "cd") {
      const next: string | null = cwd === null || words[1] === undefined ? null : resolve(cwd, words[1])
      cwd = next !== null && next.startsWith(root) && existsSync(next) && statSync(next).isDirectory() ? next : null
      continue
    }
    problems.push(...checkCommand(words, cwd, home))
  }
  return problems
}

/** A JSON snippet's MCP server entries (`command` and `args`) are commands too. */
const checkJson = (code: string): Array<string> => {
  let value: unknown
  try {
    value = JSON.parse(code)
  } catch {
    return []
  }
  const problems: Array<string> = []
  const walk = (node: unknown): void => {
    if (node === null || typeof node !== "object") return
    const entry = node as { command?: unknown; args?: unknown }
    if (typeof entry.command === "string") {
      const args = Array.isArray(entry.args) ? entry.args.map(String) : []
      const command = [entry.command, ...args]
      problems.push(...checkCommand(command, null))
      const known = ["npx", "node", "npm", "python3", "python"].includes(entry.command) ||
        workspaceBins.has(entry.command) || localBin(entry.command)
      if (!known) {
        problems.push(`"command": "${entry.command}": no workspace has that command`)
      }
    }
    Object.values(node).forEach(walk)
  }
  walk(value)
  return problems
}

const importsOf = (code: string) =>
  [...code.matchAll(
    /\bfrom\s+["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)["']|\brequire\(\s*["']([^"']+)["']|^\s*import\s+["']([^"']+)["']/gm
  )]
    .map((match) => match[1] ?? match[2] ?? match[3] ?? match[4]!)

const checkImports = (snippet: Snippet): Array<string> =>
  importsOf(snippet.code).flatMap((specifier) => {
    if (specifier.startsWith(".")) {
      return repositoryFileExists(root, specifier) ||
          repositoryFileExists(dirname(join(root, snippet.doc)), specifier) ?
        []
        : [`import "${specifier}": no such file`]
    }
    return isBuiltin(specifier) || knownPackages.has(packageNameOf(specifier)) ?
      []
      : [`import "${specifier}": not a package of the repository`]
  })

/** Python imports of a snippet: `import a.b` and `from a.b import c, d`. */
const pythonImportsOf = (code: string): Array<{ module: string; names: Array<string> }> =>
  [
    ...code.matchAll(
      /^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import[ \t]+(?:\(([\w\s,]+)\)|([\w \t,]+))|import[ \t]+([\w.]+(?:[ \t]*,[ \t]*[\w.]+)*))/gm
    )
  ].flatMap(
    (match) =>
      match[1] !== undefined ?
        [{
          module: match[1],
          names: (match[2] ?? match[3]!).split(",").map((name) => name.trim()).filter((name) => name.length > 0)
        }]
        : match[4]!.split(",").map((module) => ({ module: module.trim(), names: [] }))
  )

const isShell = (snippet: Snippet) => ["sh", "bash", "shell", "console", "", "inline"].includes(snippet.lang)
const isCode = (snippet: Snippet) => ["ts", "typescript", "js", "javascript", "tsx", "mjs"].includes(snippet.lang)

describe("the documents' code snippets", () => {
  it("are read from every document", () => {
    expect(documents).toContain("clients/typescript/README.md")
    expect(documents).toContain("docs/receipts.md")
    expect(snippets.filter((snippet) => snippet.lang === "inline").length).toBeGreaterThan(500)
    expect(snippets.filter(isCode).length).toBeGreaterThan(3)
  })

  it("name only packages, scripts, commands and files of the repository", () => {
    const problems = snippets.flatMap((snippet) =>
      [
        ...(isShell(snippet) ? checkShell(snippet.code, dirname(join(root, snippet.doc))) : []),
        ...(snippet.lang === "json" ? checkJson(snippet.code) : []),
        ...(isCode(snippet) || snippet.lang === "inline" ? checkImports(snippet) : [])
      ].map((problem) => `${snippet.doc}: ${problem}`)
    )
    expect([...new Set(problems)]).toEqual([])
  })

  it("import Python modules and names that exist (the client's in clients/python)", async () => {
    const imports = snippets.filter((snippet) => snippet.lang === "python" || snippet.lang === "py").flatMap((
      snippet
    ) => pythonImportsOf(snippet.code).map((found) => ({ ...found, doc: snippet.doc })))
    expect(imports.map((found) => found.module)).toContain("agent_gateway")
    const probe = `
import importlib, json, sys
missing = []
for found in json.loads(sys.argv[1]):
    try:
        module = importlib.import_module(found["module"])
    except ImportError as error:
        missing.append(f'{found["doc"]}: import {found["module"]}: {error}')
        continue
    missing += [f'{found["doc"]}: from {found["module"]} import {name}: no such name' for name in found["names"] if not hasattr(module, name)]
print(json.dumps(missing))
`
    const { stdout } = await promisify(execFile)("python3", ["-c", probe, JSON.stringify(imports)], {
      cwd: pythonProject,
      env: { PATH: process.env["PATH"] ?? "", PYTHONPATH: pythonProject }
    })
    expect(JSON.parse(stdout)).toEqual([])
  })

  it("show the challenge of /mcp as the service sends it", () => {
    const shown = snippets.flatMap((snippet) =>
      [
        ...snippet.code.replace(/\s+/g, " ").matchAll(
          /WWW-Authenticate: (Bearer realm="mcp".*?resource_metadata="[^"]*")/g
        )
      ]
        .map((match) => `${snippet.doc}: ${match[1]}`)
    )
    expect(shown.length).toBeGreaterThan(0)
    const docsOf = shown.map((line) => line.split(": ")[0])
    expect(docsOf).toContain("README.md")
    expect(shown).toEqual(docsOf.map((doc) => `${doc}: ${mcpChallenge("<BASE_URL>")}`))
  })
})
