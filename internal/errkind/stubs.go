package errkind

// Placeholders; each is replaced by its own file.

func classifyPostgres(error) (Kind, string, bool) { return "", "", false }
