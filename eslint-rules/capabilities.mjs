// The capability rules of `npm run lint` (docs/conventions.md, "Capabilities"): between the
// folders of src/Services imports run one way, and no statement fragment crosses from one
// capability to another. Two rules of a local plugin, both set on src/Services in
// eslint.config.mjs and proved on a fixture by test/Http/boundaries.test.ts.
//
// - `no-circle`: an import from one capability folder into another is refused when the
//   folder it reaches already reaches back (every import of every module under the root is
//   read from disk, the linted file's own from its text); the message names the circle and
//   the file that makes each hop.
// - `no-fragment-across`: an import from another capability folder is refused when the
//   imported export's declared type mentions @effect/sql's `Statement.Fragment`,
//   `Statement.Statement` (a fragment too) or the statement builder `Statement.Constructor`:
//   in the type itself, its union and intersection
//   members, type arguments, the parameters and results of its signatures, and the members
//   of the project's own types (a service's methods). The type is read by the TypeScript
//   checker over the modules under the root.
import fs from "node:fs"
import path from "node:path"
import ts from "typescript"

const DEFAULT_ROOT = "src/Services"

const options = (context) => {
  const root = path.resolve(context.cwd ?? process.cwd(), context.options[0]?.root ?? DEFAULT_ROOT)
  return { root }
}

/** The node a module belongs to: its capability folder, or the module itself at the root (a shared helper). */
const nodeOf = (root, file) => {
  const relative = path.relative(root, file)
  if (relative.startsWith("..") || path.isAbsolute(relative)) return null
  const parts = relative.split(path.sep)
  return parts.length > 1 ? parts[0] : parts[0].replace(/\.ts$/, "")
}

/** The module file a relative import names (`./X.js` is `./X.ts`), or null outside the repository's sources. */
const resolveImport = (fromFile, specifier) => {
  if (!specifier.startsWith(".")) return null
  const target = path.resolve(path.dirname(fromFile), specifier)
  for (const candidate of [target.replace(/\.js$/, ".ts"), `${target}.ts`, path.join(target, "index.ts"), target]) {
    if (candidate.endsWith(".ts") && fs.existsSync(candidate)) return candidate
  }
  return target.replace(/\.js$/, ".ts")
}

const sourceFiles = (root) => {
  const files = []
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) walk(full)
      else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) files.push(full)
    }
  }
  walk(root)
  return files
}

// ---------------------------------------------------------------------------------------
// The folder graph

/** Every import between nodes, per importing file, read once per lint run and root. */
const diskImports = new Map()
const importsOnDisk = (root) => {
  let found = diskImports.get(root)
  if (found === undefined) {
    found = new Map()
    for (const file of sourceFiles(root)) {
      const { importedFiles } = ts.preProcessFile(fs.readFileSync(file, "utf8"), true, true)
      found.set(file, importedFiles.map((imported) => resolveImport(file, imported.fileName)).filter((x) => x !== null))
    }
    diskImports.set(root, found)
  }
  return found
}

/** Edges node -> node with the first file that makes each, the linted file's own imports replacing its copy on disk. */
const folderGraph = (root, lintedFile, lintedImports) => {
  const edges = new Map()
  const add = (file, target) => {
    const from = nodeOf(root, file)
    const to = nodeOf(root, target)
    if (from === null || to === null || from === to) return
    if (!edges.has(from)) edges.set(from, new Map())
    const targets = edges.get(from)
    if (!targets.has(to)) targets.set(to, `${path.relative(root, file)} imports ${path.relative(root, target)}`)
  }
  for (const [file, targets] of importsOnDisk(root)) {
    if (file !== lintedFile) for (const target of targets) add(file, target)
  }
  for (const target of lintedImports) add(lintedFile, target)
  return edges
}

/** The shortest path of edges from `start` to `goal` (breadth first), or null. */
const pathBetween = (edges, start, goal) => {
  const cameFrom = new Map([[start, null]])
  const queue = [start]
  while (queue.length > 0) {
    const node = queue.shift()
    if (node === goal) {
      const hops = []
      for (let at = goal; cameFrom.get(at) !== null; at = cameFrom.get(at)) hops.unshift([cameFrom.get(at), at])
      return hops
    }
    for (const next of edges.get(node)?.keys() ?? []) {
      if (!cameFrom.has(next)) {
        cameFrom.set(next, node)
        queue.push(next)
      }
    }
  }
  return null
}

const noCircle = {
  meta: {
    type: "problem",
    docs: { description: "No import circle between the capability folders of src/Services" },
    schema: [{ type: "object", properties: { root: { type: "string" } }, additionalProperties: false }],
    messages: {
      circle:
        "{{from}} imports {{to}}, which closes a circle between capability folders: {{circle}} ({{hops}}). Imports run one way (docs/conventions.md)."
    }
  },
  create(context) {
    const { root } = options(context)
    const file = path.resolve(context.filename)
    const from = nodeOf(root, file)
    if (from === null) return {}
    // Every import of the file, static or dynamic, with the node its message points at.
    const imports = []
    const take = (source) => {
      if (source?.type === "Literal" && typeof source.value === "string") imports.push(source)
    }
    return {
      ImportDeclaration: (statement) => take(statement.source),
      ExportNamedDeclaration: (statement) => take(statement.source),
      ExportAllDeclaration: (statement) => take(statement.source),
      ImportExpression: (expression) => take(expression.source),
      "Program:exit"() {
        const targets = imports.map((source) => resolveImport(file, source.value))
        const edges = folderGraph(root, file, targets.filter((target) => target !== null))
        const reported = new Set()
        imports.forEach((source, index) => {
          const target = targets[index]
          const to = target === null ? null : nodeOf(root, target)
          if (to === null || to === from || reported.has(to)) return
          const back = pathBetween(edges, to, from)
          if (back === null) return
          reported.add(to)
          context.report({
            node: source,
            messageId: "circle",
            data: {
              from,
              to,
              circle: [from, to, ...back.map(([, next]) => next)].join(" -> "),
              hops: [`this file imports ${path.relative(root, target)}`, ...back.map(([a, b]) => edges.get(a).get(b))]
                .join("; ")
            }
          })
        })
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// Statement fragments

/** One program over the modules under a root (and what they import), made once per lint run. */
const programs = new Map()
const checkerFor = (root) => {
  let found = programs.get(root)
  if (found === undefined) {
    const configFile = ts.findConfigFile(root, ts.sys.fileExists, "tsconfig.json")
    const parsed = configFile === undefined
      ? { options: { strict: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext } }
      : ts.getParsedCommandLineOfConfigFile(configFile, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })
    const program = ts.createProgram({
      rootNames: sourceFiles(root),
      options: { ...parsed.options, noEmit: true, plugins: [] }
    })
    found = { program, checker: program.getTypeChecker() }
    programs.set(root, found)
  }
  return found
}

const inLibrary = (declaration) => declaration.getSourceFile().fileName.includes(`${path.sep}node_modules${path.sep}`)

const declaredInLibrary = (type) => {
  const declarations = (type.aliasSymbol ?? type.getSymbol())?.declarations ?? []
  return declarations.length > 0 && declarations.every(inLibrary)
}

/** `Statement.Fragment`, `Statement.Statement` (a fragment too) or the builder `Statement.Constructor` of @effect/sql. */
const statementPieces = new Set(["Fragment", "Statement", "Constructor"])
const isStatementPiece = (symbol) =>
  symbol !== undefined && statementPieces.has(symbol.name) &&
  (symbol.declarations ?? []).some((declaration) =>
    /@effect[\\/]sql[\\/].*Statement\.d\.ts$/.test(declaration.getSourceFile().fileName)
  )

/** Whether a type mentions a statement fragment or builder (see the header), or null; else the piece's name. */
const mentionedPiece = (checker, start) => {
  const seen = new Set()
  const visit = (type, depth) => {
    if (type === undefined || depth > 12 || seen.has(type)) return null
    seen.add(type)
    for (const symbol of [type.aliasSymbol, type.getSymbol()]) {
      if (isStatementPiece(symbol)) return `Statement.${symbol.name}`
    }
    const next = []
    next.push(...type.aliasTypeArguments ?? [])
    if (type.isUnionOrIntersection()) next.push(...type.types)
    if (type.flags & ts.TypeFlags.Object && type.objectFlags & ts.ObjectFlags.Reference) {
      next.push(...checker.getTypeArguments(type))
    }
    // A library's own type is read by its type arguments only: a Layer that needs the SQL
    // client, or an Effect, is no fragment, though the client is a statement builder.
    if (type.flags & ts.TypeFlags.Object && !declaredInLibrary(type)) {
      for (const signature of [...type.getCallSignatures(), ...type.getConstructSignatures()]) {
        for (const parameter of signature.getParameters()) next.push(checker.getTypeOfSymbol(parameter))
        next.push(signature.getReturnType())
      }
      for (const property of checker.getPropertiesOfType(type)) {
        const declaration = property.valueDeclaration ?? property.declarations?.[0]
        if (declaration !== undefined && !inLibrary(declaration)) next.push(checker.getTypeOfSymbol(property))
      }
      if (type.objectFlags & (ts.ObjectFlags.Class | ts.ObjectFlags.Interface)) {
        for (const base of checker.getBaseTypes(type) ?? []) next.push(base)
      }
    }
    for (const inner of next) {
      const found = visit(inner, depth + 1)
      if (found !== null) return found
    }
    return null
  }
  return visit(start, 0)
}

/** The types an exported symbol declares: its value's type and, for a class, interface or alias, the type it names. */
const declaredTypes = (checker, symbol) => {
  const resolved = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
  const types = []
  if (resolved.flags & ts.SymbolFlags.Value && resolved.valueDeclaration !== undefined) {
    types.push(checker.getTypeOfSymbolAtLocation(resolved, resolved.valueDeclaration))
  }
  if (resolved.flags & ts.SymbolFlags.Type) types.push(checker.getDeclaredTypeOfSymbol(resolved))
  return types
}

const noFragmentAcross = {
  meta: {
    type: "problem",
    docs: { description: "No statement fragment imported from another capability folder of src/Services" },
    schema: [{ type: "object", properties: { root: { type: "string" } }, additionalProperties: false }],
    messages: {
      fragment:
        "`{{name}}` of {{module}} mentions {{piece}} in its type: {{from}} may not take a statement fragment from {{to}}. A capability owns its SQL; pass values (docs/conventions.md)."
    }
  },
  create(context) {
    const { root } = options(context)
    const file = path.resolve(context.filename)
    const from = nodeOf(root, file)
    if (from === null) return {}
    const check = (statement, names) => {
      const target = resolveImport(file, statement.source.value)
      const to = target === null ? null : nodeOf(root, target)
      // Only modules of another capability folder (a shared helper at the root is no capability).
      if (to === null || to === from || path.dirname(target) === root || !fs.existsSync(target)) return
      const { checker, program } = checkerFor(root)
      const source = program.getSourceFile(target)
      const moduleSymbol = source === undefined ? undefined : checker.getSymbolAtLocation(source)
      if (moduleSymbol === undefined) return
      const exports = checker.getExportsOfModule(moduleSymbol)
      for (const [name, node] of names(exports)) {
        const symbol = exports.find((exported) => exported.name === name)
        if (symbol === undefined) continue
        for (const type of declaredTypes(checker, symbol)) {
          const piece = mentionedPiece(checker, type)
          if (piece !== null) {
            context.report({
              node,
              messageId: "fragment",
              data: { name, module: path.relative(root, target), piece, from, to }
            })
            break
          }
        }
      }
    }
    const named = (specifiers) => () =>
      specifiers.flatMap((specifier) => {
        if (specifier.type === "ImportSpecifier") return [[specifier.imported.name ?? specifier.imported.value, specifier]]
        if (specifier.type === "ExportSpecifier") return [[specifier.local.name ?? specifier.local.value, specifier]]
        return []
      })
    const everything = (node) => (exports) => exports.map((exported) => [exported.name, node])
    return {
      ImportDeclaration(statement) {
        const namespace = statement.specifiers.find((specifier) => specifier.type === "ImportNamespaceSpecifier")
        const byDefault = statement.specifiers.filter((specifier) => specifier.type === "ImportDefaultSpecifier")
        check(
          statement,
          namespace !== undefined ? everything(namespace) : (exports) => [
            ...named(statement.specifiers)(exports),
            ...byDefault.map((specifier) => ["default", specifier])
          ]
        )
      },
      ExportNamedDeclaration(statement) {
        if (statement.source) check(statement, named(statement.specifiers))
      },
      ExportAllDeclaration(statement) {
        check(statement, everything(statement))
      }
    }
  }
}

export default {
  meta: { name: "capabilities" },
  rules: { "no-circle": noCircle, "no-fragment-across": noFragmentAcross }
}
