import { useEffect, useState } from "react"
import { Link, useNavigate } from "react-router"
import { useApiMutation, useApiQuery } from "../api/hooks.js"
import type { MeData } from "../api/types.js"
import { ErrorNotice, Loaded, Status, When } from "../components/ui.js"

const PhoneSection = ({ me }: { readonly me: MeData }) => {
  const [phone, setPhone] = useState(me.user.phone ?? "")
  const [code, setCode] = useState("")
  const start = useApiMutation((c, number: string) => c.account.startPhone({ payload: { phone: number } }))
  const verify = useApiMutation((c, value: string) => c.account.verifyPhone({ payload: { code: value } }), [["me"]])
  if (me.user.phone_verified) {
    return (
      <p>
        Phone <b>{me.user.phone}</b> is verified.
      </p>
    )
  }
  return (
    <div className="stack">
      <p>Creating an org needs a verified phone. We text a 6-digit code.</p>
      <form
        className="inline"
        onSubmit={(event) => {
          event.preventDefault()
          start.mutate(phone)
        }}
      >
        <label>
          Phone (international, +1…)
          <input type="tel" required value={phone} onChange={(e) => setPhone(e.target.value)} autoComplete="tel" />
        </label>
        <button type="submit" disabled={start.isPending}>{start.isPending ? "Sending…" : "Text me a code"}</button>
      </form>
      <ErrorNotice error={start.error} />
      {start.isSuccess
        ? (
          <form
            className="inline"
            onSubmit={(event) => {
              event.preventDefault()
              verify.mutate(code)
            }}
          >
            <label>
              Code
              <input
                inputMode="numeric"
                required
                value={code}
                onChange={(e) => setCode(e.target.value)}
                autoComplete="one-time-code"
              />
            </label>
            <button type="submit" disabled={verify.isPending}>Verify</button>
            <ErrorNotice error={verify.error} />
          </form>
        )
        : null}
    </div>
  )
}

const NewOrg = ({ phoneVerified }: { readonly phoneVerified: boolean }) => {
  const [name, setName] = useState("")
  const navigate = useNavigate()
  const create = useApiMutation((c, value: string) => c.account.createOrg({ payload: { name: value } }), [["me"]])
  // A refusal for want of a verified phone is over once the phone is verified.
  const { reset } = create
  useEffect(() => {
    if (phoneVerified) reset()
  }, [phoneVerified, reset])
  return (
    <form
      className="inline"
      onSubmit={(event) => {
        event.preventDefault()
        create.mutate(name, { onSuccess: ({ org }) => navigate(`/orgs/${org.id}`) })
      }}
    >
      <label>
        New org name
        <input required value={name} onChange={(e) => setName(e.target.value)} />
      </label>
      <button type="submit" disabled={create.isPending}>Create org</button>
      <ErrorNotice error={create.error} />
    </form>
  )
}

/** The person: phone, orgs (create, switch), data-deletion requests they made. */
export const AccountPage = ({ me }: { readonly me: MeData }) => {
  const deletions = useApiQuery(["my-deletions"], (c) => c.account.myDeletionRequests())
  return (
    <div className="stack">
      <h1>Your account</h1>
      <section className="card">
        <h2>{me.user.email}</h2>
        <PhoneSection me={me} />
      </section>
      <section className="card">
        <h2>Orgs</h2>
        {me.orgs.length === 0 ?
          <p>You are not in an org yet. Create one, or accept an invitation from your mail.</p> :
          (
            <ul className="plain">
              {me.orgs.map((org) => (
                <li key={org.id}>
                  <Link to={`/orgs/${org.id}`}>{org.name}</Link> <Status value={org.role} />
                </li>
              ))}
            </ul>
          )}
        <NewOrg phoneVerified={me.user.phone_verified} />
      </section>
      <section className="card">
        <h2>Data-deletion requests</h2>
        <Loaded query={deletions}>
          {(data) =>
            data.deletion_requests.length === 0 ? <p className="muted">None.</p> : (
              <ul className="plain">
                {data.deletion_requests.map((request) => (
                  <li key={request.id}>
                    <Status value={request.status} /> requested <When at={request.created_at} />
                  </li>
                ))}
              </ul>
            )}
        </Loaded>
      </section>
    </div>
  )
}
