import { Effect, Schema } from "effect"
import * as fs from "node:fs"
import { TaskTypeId } from "../../Domain/TaskType.js"
import { projectRoot } from "../../ProjectRoot.js"
import { readDataFile } from "../DataFiles.js"

/**
 * Labelled sample sets, one or more per task type, shipped under data/samples/*.json: each
 * sample is an input and the answer known to be right. Add a set by adding a file; the
 * newest set of a task type (by id, which ends with its month) is the default of a run.
 */
export const Sample = Schema.Struct({
  id: Schema.String,
  input: Schema.Record({ key: Schema.String, value: Schema.Union(Schema.String, Schema.Number, Schema.Boolean) }),
  expected: Schema.Record({ key: Schema.String, value: Schema.Union(Schema.String, Schema.Number) })
})
export type Sample = typeof Sample.Type

export const SampleSet = Schema.Struct({
  id: Schema.String,
  task_type: TaskTypeId,
  description: Schema.String,
  samples: Schema.NonEmptyArray(Sample)
})
export type SampleSet = typeof SampleSet.Type

export class SampleSets extends Effect.Service<SampleSets>()("Benchmarks/SampleSets", {
  effect: Effect.gen(function*() {
    const files = fs.readdirSync(new URL("data/samples/", projectRoot)).filter((name) => name.endsWith(".json")).sort()
    const sets = yield* Effect.forEach(files, (name) => readDataFile(`samples/${name}`, SampleSet))
    const byId = new Map(sets.map((set) => [set.id, set]))
    if (byId.size !== sets.length) return yield* Effect.die(new Error("Two sample sets under data/samples share an id"))

    /** The set named, or the newest one of the task type. */
    const find = (taskType: TaskTypeId, id?: string): SampleSet | undefined =>
      id !== undefined
        ? byId.get(id)
        : sets.filter((set) => set.task_type === taskType).sort((a, b) => b.id.localeCompare(a.id))[0]

    const list = sets.map((set) => ({
      id: set.id,
      task_type: set.task_type,
      description: set.description,
      size: set.samples.length
    }))

    return { find, list } as const
  })
}) {}
