package config

// Eval is eval, for the external tests of the calculator's engine.
var Eval = eval
