/**
 * The first thing a keyboard reaches on every page: a jump past the top bar and the
 * navigation to the page's `<main id="main">`. It moves the focus itself: with the page's
 * `<base>` (DASHBOARD_PATH) a bare `#main` would resolve to the dashboard's start page.
 */
export const SkipLink = () => (
  <a
    className="skip-link"
    href="#main"
    onClick={(event) => {
      const main = document.getElementById("main")
      if (main === null) return
      event.preventDefault()
      main.focus()
      main.scrollIntoView()
    }}
  >
    Skip to main content
  </a>
)
