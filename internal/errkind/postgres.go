package errkind

import (
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
)

// classifyPostgres classifies errors of the pgx driver, the one gorm's PostgreSQL dialector (and
// so adk-go's database session service on PostgreSQL) uses. It decides by type and SQLSTATE,
// never by message text: messages are localized, and they and PgError.Detail quote row values.
func classifyPostgres(err error) (Kind, string, bool) {
	// First, because a failed connect wraps the server's refusal (bad password, too many clients).
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return postgresKind(pg.Code), postgresMessage(pg), true
	}
	var connect *pgconn.ConnectError
	if errors.As(err, &connect) {
		return Network, "postgres: connect failed", true
	}
	var parse *pgconn.ParseConfigError
	if errors.As(err, &parse) {
		return Config, "postgres: invalid connection string", true
	}
	return "", "", false
}

func postgresKind(code string) Kind {
	switch code {
	case "40001", "40P01": // serialization_failure, deadlock_detected: retry the transaction
		return Conflict
	case "55P03", "53300": // lock_not_available, too_many_connections: retry later
		return Busy
	case "57014": // query_canceled: statement_timeout or a cancel request
		return Canceled
	case "57P01", "57P02", "57P03": // the server ended the session or is not accepting any
		return Network
	}
	switch sqlstateClass(code) {
	case "08": // connection_exception
		return Network
	case "28": // invalid_authorization_specification
		return Auth
	}
	return Storage
}

// postgresMessage names the condition by its SQLSTATE and severity only.
func postgresMessage(pg *pgconn.PgError) string {
	code := pg.Code
	if !validSQLState(code) {
		return "postgres: invalid SQLSTATE"
	}
	msg := "postgres: SQLSTATE " + code
	if name := sqlstateName(code); name != "" {
		msg += " " + name
	} else if class := sqlstateClassName(sqlstateClass(code)); class != "" {
		msg += " (class " + class + ")"
	}
	// The unlocalized severity when the server sends it (9.6+); both are one upper-case word.
	severity := pg.SeverityUnlocalized
	if severity == "" {
		severity = pg.Severity
	}
	if validSeverity(severity) {
		msg += ", severity " + severity
	}
	return msg
}

func sqlstateClass(code string) string {
	if len(code) < 2 {
		return ""
	}
	return code[:2]
}

// A SQLSTATE is five digits or upper-case letters; anything else is not echoed.
func validSQLState(code string) bool {
	if len(code) != 5 {
		return false
	}
	for _, c := range []byte(code) {
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

func validSeverity(s string) bool {
	if s == "" || len(s) > 10 {
		return false
	}
	for _, c := range []byte(s) {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return true
}

// sqlstateName returns PostgreSQL's condition names (Appendix A) for the codes classified above and
// the ones a session store commonly meets.
func sqlstateName(code string) string {
	switch code {
	case "08000":
		return "connection_exception"
	case "08003":
		return "connection_does_not_exist"
	case "08006":
		return "connection_failure"
	case "08001":
		return "sqlclient_unable_to_establish_sqlconnection"
	case "08004":
		return "sqlserver_rejected_establishment_of_sqlconnection"
	case "08P01":
		return "protocol_violation"
	case "22001":
		return "string_data_right_truncation"
	case "22P02":
		return "invalid_text_representation"
	case "23502":
		return "not_null_violation"
	case "23503":
		return "foreign_key_violation"
	case "23505":
		return "unique_violation"
	case "23514":
		return "check_violation"
	case "25P02":
		return "in_failed_sql_transaction"
	case "28000":
		return "invalid_authorization_specification"
	case "28P01":
		return "invalid_password"
	case "3D000":
		return "invalid_catalog_name"
	case "40001":
		return "serialization_failure"
	case "40P01":
		return "deadlock_detected"
	case "42501":
		return "insufficient_privilege"
	case "42703":
		return "undefined_column"
	case "42P01":
		return "undefined_table"
	case "53100":
		return "disk_full"
	case "53200":
		return "out_of_memory"
	case "53300":
		return "too_many_connections"
	case "55P03":
		return "lock_not_available"
	case "57014":
		return "query_canceled"
	case "57P01":
		return "admin_shutdown"
	case "57P02":
		return "crash_shutdown"
	case "57P03":
		return "cannot_connect_now"
	}
	return ""
}

// sqlstateClassName returns the name of a SQLSTATE class (Appendix A), or "".
func sqlstateClassName(code string) string {
	switch code {
	case "00":
		return "successful_completion"
	case "01":
		return "warning"
	case "02":
		return "no_data"
	case "03":
		return "sql_statement_not_yet_complete"
	case "08":
		return "connection_exception"
	case "09":
		return "triggered_action_exception"
	case "0A":
		return "feature_not_supported"
	case "0B":
		return "invalid_transaction_initiation"
	case "0F":
		return "locator_exception"
	case "0L":
		return "invalid_grantor"
	case "0P":
		return "invalid_role_specification"
	case "0Z":
		return "diagnostics_exception"
	case "20":
		return "case_not_found"
	case "21":
		return "cardinality_violation"
	case "22":
		return "data_exception"
	case "23":
		return "integrity_constraint_violation"
	case "24":
		return "invalid_cursor_state"
	case "25":
		return "invalid_transaction_state"
	case "26":
		return "invalid_sql_statement_name"
	case "27":
		return "triggered_data_change_violation"
	case "28":
		return "invalid_authorization_specification"
	case "2B":
		return "dependent_privilege_descriptors_still_exist"
	case "2D":
		return "invalid_transaction_termination"
	case "2F":
		return "sql_routine_exception"
	case "34":
		return "invalid_cursor_name"
	case "38":
		return "external_routine_exception"
	case "39":
		return "external_routine_invocation_exception"
	case "3B":
		return "savepoint_exception"
	case "3D":
		return "invalid_catalog_name"
	case "3F":
		return "invalid_schema_name"
	case "40":
		return "transaction_rollback"
	case "42":
		return "syntax_error_or_access_rule_violation"
	case "44":
		return "with_check_option_violation"
	case "53":
		return "insufficient_resources"
	case "54":
		return "program_limit_exceeded"
	case "55":
		return "object_not_in_prerequisite_state"
	case "57":
		return "operator_intervention"
	case "58":
		return "system_error"
	case "72":
		return "snapshot_too_old"
	case "F0":
		return "config_file_error"
	case "HV":
		return "fdw_error"
	case "P0":
		return "plpgsql_error"
	case "XX":
		return "internal_error"
	}
	return ""
}
