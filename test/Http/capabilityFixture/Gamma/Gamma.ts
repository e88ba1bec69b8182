export const gamma = "gamma"
