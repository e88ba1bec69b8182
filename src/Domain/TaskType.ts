import { Schema } from "effect"

/** The seven task types an agent can buy results for. */
export const taskTypeIds = [
  "email_find",
  "email_verify",
  "phone_find",
  "person_enrich",
  "company_enrich",
  "web_search",
  "web_extract"
] as const

export const TaskTypeId = Schema.Literal(...taskTypeIds).annotations({ identifier: "TaskTypeId" })
export type TaskTypeId = typeof TaskTypeId.Type

export const isTaskTypeId = Schema.is(TaskTypeId)

export const TaskType = Schema.Struct({
  id: TaskTypeId,
  name: Schema.String,
  description: Schema.String,
  input_fields: Schema.Array(Schema.String),
  optional_fields: Schema.Array(Schema.String)
}).annotations({ identifier: "TaskType" })
export type TaskType = typeof TaskType.Type

export const taskTypes: ReadonlyArray<TaskType> = [
  {
    id: "email_find",
    name: "Find an email address",
    description: "The professional email address of a named person at a company domain.",
    input_fields: ["first_name", "last_name", "domain"],
    optional_fields: []
  },
  {
    id: "email_verify",
    name: "Verify an email address",
    description: "Whether an email address accepts mail: deliverable, undeliverable or risky.",
    input_fields: ["email"],
    optional_fields: []
  },
  {
    id: "phone_find",
    name: "Find a phone number",
    description: "A direct or mobile phone number for a person identified by a profile URL.",
    input_fields: ["linkedin_url"],
    optional_fields: ["email", "first_name", "last_name", "domain"]
  },
  {
    id: "person_enrich",
    name: "Enrich a person",
    description: "Name, title, employer and location of the person behind an email address.",
    input_fields: ["email"],
    optional_fields: ["linkedin_url"]
  },
  {
    id: "company_enrich",
    name: "Enrich a company",
    description: "Name, industry, size and location of the company behind a domain.",
    input_fields: ["domain"],
    optional_fields: []
  },
  {
    id: "web_search",
    name: "Search the web",
    description: "Ranked organic web results (title, URL, snippet) for a query.",
    input_fields: ["query"],
    optional_fields: ["country", "count"]
  },
  {
    id: "web_extract",
    name: "Extract a web page",
    description: "The main text and metadata of a web page at a URL.",
    input_fields: ["url"],
    optional_fields: ["format"]
  }
]
