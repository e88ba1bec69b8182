import { QueryClient, QueryClientProvider } from "@tanstack/react-query"
import { StrictMode } from "react"
import { createRoot } from "react-dom/client"
import { BrowserRouter } from "react-router"
import { isApiError } from "./api/client.js"
import { App } from "./App.js"
import { SkipLink } from "./components/SkipLink.js"
import "./styles.css"

/** The app lives below the `<base>` the service wrote into the page (DASHBOARD_PATH). */
const basename = new URL(document.baseURI).pathname.replace(/\/$/, "") || "/"

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A refusal is an answer, not a hiccup: only network trouble is retried.
      retry: (count, error) => isApiError(error, "network_error") && count < 3,
      staleTime: 5_000,
      refetchOnWindowFocus: false
    }
  }
})

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <BrowserRouter basename={basename}>
        <SkipLink />
        <App />
      </BrowserRouter>
    </QueryClientProvider>
  </StrictMode>
)
