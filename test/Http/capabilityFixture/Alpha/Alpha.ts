import { beta } from "../Beta/Beta.js"

export const alpha = `alpha of ${beta}`
