import PostgresDB

/// The days each activity and each booking has events on (`activity_days`, `booking_days`;
/// the booking only as the events name it, as `events.booking_id` does). A read of one
/// activity's or one booking's events names those days (`PostgresEventReads`), so PostgreSQL
/// plans it over their partitions of `events` alone: without them it plans and scans every day's
/// partition, which made one activity's read take seconds at a thousand days.
///
/// Kept whole by construction: the writer files the days of the events it inserts in the same
/// statement (`insertEventsSQL`), `migrate` and the schema step that added the tables fill them
/// from `events` (`fillSQL`), and retention deletes a day's rows with its partition
/// (`PostgresEventPartitions.drop`). Public for the benchmark's storage limit, which stores
/// what the writer stores.
public enum PostgresEventDays {
    /// The tables filed by day that retention empties with their partition.
    static let tables = ["activity_days", "booking_days"]

    /// Fills both tables from the events stored (idempotent).
    static let fillSQL = """
        INSERT INTO activity_days (activity_id, day)
        SELECT DISTINCT activity_id, day FROM events WHERE activity_id IS NOT NULL ON CONFLICT DO NOTHING;
        INSERT INTO booking_days (booking_id, day)
        SELECT DISTINCT booking_id, day FROM events WHERE booking_id IS NOT NULL ON CONFLICT DO NOTHING;
        """

    /// Inserts events (one array parameter per column) and files their days, in one statement:
    /// no round trip more per commit. A pair already filed is left alone (`DO NOTHING` writes
    /// nothing), so an activity costs one row a day, not one an event.
    public static let insertEventsSQL = """
        WITH inserted AS (
            INSERT INTO events (seq, day, event_id, type, activity_id, booking_id, occurred_at, received_at, body)
            SELECT * FROM unnest($1::bigint[], $2::integer[], $3::text[], $4::text[], $5::text[], $6::text[],
                                 $7::float8[], $8::float8[], $9::text[])
            RETURNING day, activity_id, booking_id
        ), activity_days_filed AS (
            INSERT INTO activity_days (activity_id, day)
            SELECT DISTINCT activity_id, day FROM inserted WHERE activity_id IS NOT NULL ON CONFLICT DO NOTHING
        )
        INSERT INTO booking_days (booking_id, day)
        SELECT DISTINCT booking_id, day FROM inserted WHERE booking_id IS NOT NULL ON CONFLICT DO NOTHING
        """
}
