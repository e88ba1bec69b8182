import { gamma } from "../Gamma/Gamma.js"

export const beta = `beta of ${gamma}`
