import { useOutletContext } from "react-router"
import type { OrgOfMe } from "./types.js"

/** The org whose pages are open (its id, name and the person's role in it). */
export const useOrg = () => useOutletContext<OrgOfMe>()
