package pubcheck_test

const crashChildEnv = "PUBCHECK_CRASH_CHILD"

func crashChild() int { return 0 }
