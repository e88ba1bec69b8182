import * as http from "node:http"

/**
 * The European Central Bank's daily reference rates, served from loopback in the ECB's
 * own XML layout (every currency against EUR). A test sets the rates or takes the source
 * down (500).
 */
export interface FakeEcb {
  readonly url: string
  readonly set: (rates: { readonly date: string; readonly usd: string; readonly inr: string }) => void
  readonly down: () => void
  readonly requests: () => number
  readonly close: () => Promise<void>
}

export const ecbXml = (date: string, usd: string, inr: string) =>
  `<?xml version="1.0" encoding="UTF-8"?>
<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
	<gesmes:subject>Reference rates</gesmes:subject>
	<gesmes:Sender>
		<gesmes:name>European Central Bank</gesmes:name>
	</gesmes:Sender>
	<Cube>
		<Cube time='${date}'>
			<Cube currency='USD' rate='${usd}'/>
			<Cube currency='JPY' rate='162.48'/>
			<Cube currency='GBP' rate='0.83350'/>
			<Cube currency='INR' rate='${inr}'/>
			<Cube currency='ZAR' rate='19.9150'/>
		</Cube>
	</Cube>
</gesmes:Envelope>
`

export const startFakeEcb = async (): Promise<FakeEcb> => {
  let body: string | null = null
  let count = 0
  const server = http.createServer((_req, res) => {
    count++
    if (body === null) {
      res.writeHead(500, { "content-type": "text/plain" })
      return void res.end("unavailable")
    }
    res.writeHead(200, { "content-type": "text/xml" })
    res.end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as { port: number }).port
  return {
    url: `http://127.0.0.1:${port}/stats/eurofxref/eurofxref-daily.xml`,
    set: ({ date, inr, usd }) => void (body = ecbXml(date, usd, inr)),
    down: () => void (body = null),
    requests: () => count,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
