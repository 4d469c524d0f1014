import PostgresDB

/// The PostgreSQL store's tables, as versioned migrations (`schema_migrations`): the same
/// data as the SQLite schema (`Schema`), shaped for a server database.
///
/// - `events` is partitioned by day of `occurred_at` (`day`, Unix days), so that retention
///   drops whole partitions (`PostgresEventPartitions`). A unique index on a partitioned table
///   must hold the partition key, so the idempotency keys live in `event_keys` (one row per
///   keyed event, with its day, deleted with its partition).
/// - Ids compare and sort by their bytes (`COLLATE "C"`), as SQLite's BINARY does, whatever the
///   database's locale: list pages are ordered by (start, id) in both stores alike.
/// - Tables filed by event (`event_verdicts`, `broadcast_receivers`, `broadcast_verdicts`, `start_push_verdicts`)
///   carry the event's day too, so retention deletes their rows by day, as the SQLite schema's
///   triggers do by `seq`; so do the days of each activity and booking (`PostgresEventDays`).
enum PostgresSchema {
    static let migrations: [PostgresMigration] = [
        """
        CREATE SEQUENCE events_seq AS bigint;
        CREATE TABLE events (
            seq          bigint NOT NULL DEFAULT nextval('events_seq'),
            day          integer NOT NULL,           -- floor(occurred_at / 86400): the partition key
            event_id     text,                       -- the client's idempotency key (unique: event_keys)
            type         text NOT NULL,
            activity_id  text,
            booking_id   text,                       -- only a booking the client gave
            occurred_at  double precision NOT NULL,  -- Unix seconds
            received_at  double precision NOT NULL,
            body         text NOT NULL,              -- the event as ingested; push_token replaced by token_fingerprint
            PRIMARY KEY (day, seq)
        ) PARTITION BY RANGE (day);
        CREATE INDEX events_by_seq ON events (seq);
        CREATE INDEX events_by_activity ON events (activity_id, occurred_at, seq) WHERE activity_id IS NOT NULL;
        CREATE INDEX events_by_booking ON events (booking_id, occurred_at, seq) WHERE booking_id IS NOT NULL;

        CREATE TABLE event_keys (
            event_id text PRIMARY KEY,
            seq      bigint NOT NULL,
            day      integer NOT NULL
        );
        CREATE INDEX event_keys_by_day ON event_keys (day);

        CREATE TABLE activities (
            activity_id          text COLLATE "C" PRIMARY KEY,   -- "C": ids sort by bytes, as in SQLite
            booking_id           text COLLATE "C",
            attributes_type      text NOT NULL,
            app                  text,
            source               text NOT NULL,
            started_at           double precision NOT NULL,
            attributes           text,
            content_state        text,
            content_timestamp    double precision NOT NULL,
            stale_date           double precision,
            relevance_score      double precision,
            reported_stale       boolean NOT NULL,
            stale_counted        boolean NOT NULL,
            ended_at             double precision,
            ended_by             text,
            dismissal_policy     text,
            dismissal_date       double precision,
            dismissed_at         double precision,
            token_fingerprint    text,
            token_rotations      bigint NOT NULL,
            token_rotated_at     double precision,
            token_invalid_reason text,
            last_push_status     bigint,
            last_push_reason     text,
            last_push_latency_ms double precision,
            last_push_priority   bigint,
            last_push_at         double precision,
            priority10_times     bytea NOT NULL,
            delivery             bytea,            -- DeliveryEvidence.stored
            undecodable_at       double precision,
            undecodable_detail   text,
            start_date           double precision,
            channel_id           text
        );
        CREATE INDEX activities_by_booking ON activities (booking_id) WHERE booking_id IS NOT NULL;
        CREATE INDEX activities_live ON activities (activity_id) WHERE dismissed_at IS NULL;
        CREATE INDEX activities_dismissed ON activities (started_at DESC, activity_id) WHERE dismissed_at IS NOT NULL;

        -- key is SeriesKey.storageKey; histogram "sum;count0;count1;…" (per bucket), as in SQLite.
        CREATE TABLE counters (
            key       text PRIMARY KEY,
            value     double precision NOT NULL,
            histogram text
        );
        CREATE TABLE content_shapes (
            attributes_type text PRIMARY KEY,
            shape           text NOT NULL
        );
        CREATE TABLE event_verdicts (
            seq    bigint PRIMARY KEY,
            day    integer NOT NULL,
            detail text NOT NULL
        );
        CREATE TABLE broadcast_receivers (
            activity_id text NOT NULL,
            seq         bigint NOT NULL,
            day         integer NOT NULL,
            PRIMARY KEY (activity_id, seq)
        );
        CREATE INDEX broadcast_receivers_by_day ON broadcast_receivers (day);

        CREATE TABLE pending_start_pushes (
            seq             bigint PRIMARY KEY,
            booking_id      text NOT NULL,
            attributes_type text,
            sent_at         double precision NOT NULL,
            deadline        double precision NOT NULL
        );
        CREATE TABLE unstarted_start_pushes (LIKE pending_start_pushes INCLUDING ALL);
        CREATE TABLE push_to_start_tokens (
            device_id       text NOT NULL,
            attributes_type text NOT NULL,
            fingerprint     text NOT NULL,
            at              double precision NOT NULL,
            PRIMARY KEY (device_id, attributes_type)
        );
        CREATE TABLE superseded_push_to_start_tokens (fingerprint text PRIMARY KEY);
        CREATE TABLE start_push_verdicts (
            seq bigint PRIMARY KEY,
            day integer NOT NULL,
            why text NOT NULL
        );
        """,
        // Channel management (`channel.created`, `channel.deleted`): each channel as the book
        // knows it (`ChannelBook`), and the events that name it and no activity, filed by day.
        """
        CREATE TABLE channels (
            channel_id     text PRIMARY KEY,
            storage_policy bigint,
            created_at     double precision,
            created_seq    bigint,
            deleted_at     double precision,
            deleted_seq    bigint,
            last_broadcast text                   -- JSON: ChannelBook.Broadcast
        );
        CREATE TABLE channel_events (
            channel_id text NOT NULL,
            seq        bigint NOT NULL,
            day        integer NOT NULL,
            PRIMARY KEY (channel_id, seq)
        );
        CREATE INDEX channel_events_by_day ON channel_events (day);
        """,
        // The leader's epoch (`LeaderEpoch`): raised by each replica that takes the leader
        // lock; every commit checks it, so that a deposed leader never commits again.
        """
        CREATE TABLE leader (
            id    integer PRIMARY KEY CHECK (id = 1),
            epoch bigint NOT NULL
        );
        INSERT INTO leader (id, epoch) VALUES (1, 0);
        """,
        // The days each activity and booking has events on (`PostgresEventDays`), filled from
        // the events already stored: one activity's or booking's read plans over those
        // partitions only.
        .sql("""
            CREATE TABLE activity_days (
                activity_id text NOT NULL,
                day         integer NOT NULL,
                PRIMARY KEY (activity_id, day)
            );
            CREATE INDEX activity_days_by_day ON activity_days (day);
            CREATE TABLE booking_days (
                booking_id text NOT NULL,
                day        integer NOT NULL,
                PRIMARY KEY (booking_id, day)
            );
            CREATE INDEX booking_days_by_day ON booking_days (day);
            """ + PostgresEventDays.fillSQL),
        // A broadcast's verdicts per attributes type of its subscribers (the SQLite schema's
        // `broadcast_verdicts`), filed by the broadcast's day. Types by their bytes ("C").
        """
        CREATE TABLE broadcast_verdicts (
            seq             bigint NOT NULL,
            day             integer NOT NULL,
            attributes_type text COLLATE "C" NOT NULL,
            detail          text NOT NULL,
            PRIMARY KEY (seq, attributes_type)
        );
        CREATE INDEX broadcast_verdicts_by_day ON broadcast_verdicts (day);
        """,
    ]
}
