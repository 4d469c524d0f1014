import SQLiteDB

/// The database schema as migrations: `migrations[i]` takes `PRAGMA user_version` from i to i+1.
enum Schema {
    struct NotAMonitorDatabase: Error, CustomStringConvertible {
        let path: String
        var description: String { "\(path) is not a live-activity-monitor database (it has none of its tables)" }
    }

    struct OlderVersion: Error, CustomStringConvertible {
        let path: String
        var description: String {
            "\(path) was written by an older version of live-activity-monitor; "
                + "start `live-activity-monitor serve --db \(path)` once to upgrade it"
        }
    }

    struct NotAnSQLiteFile: Error, CustomStringConvertible {
        let path: String
        var description: String {
            "\(path) is not an SQLite database (SQLite: file is not a database): give the monitor's database file, or a new one"
        }
    }

    struct AnotherProgramsDatabase: Error, CustomStringConvertible {
        let path: String
        let tables: [String]
        var description: String {
            "\(path) is not a live-activity-monitor database: it holds another program's tables "
                + "(\(tables.prefix(5).joined(separator: ", "))\(tables.count > 5 ? ", …" : "")), none of the monitor's; "
                + "give the monitor's database file, or a new one"
        }
    }

    /// How many migrations the file lacks. Refuses a file of a newer version (`pendingMigrations`
    /// throws), and one that is not an SQLite database, naming it (SQLite's message does not).
    @discardableResult
    static func pendingMigrations(_ db: Database) throws -> Int {
        do throws(SQLiteError) {
            return try db.pendingMigrations(migrations)
        } catch {
            if error.isNotADatabase { throw NotAnSQLiteFile(path: db.path) }
            throw error
        }
    }

    /// For the commands that create the tables in a new file (`serve`, `import`): refuses a file
    /// of no version that already holds tables, another program's, rather than add ours to it.
    static func refuseAnotherProgramsDatabase(_ db: Database) throws {
        guard try db.userVersion == 0 else { return }
        var tables: [String] = []
        let names = try db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        while try names.step() { tables.append(names.text(0) ?? "") }
        guard tables.isEmpty else { throw AnotherProgramsDatabase(path: db.path, tables: tables) }
    }

    /// For a read-only command whose queries need the current tables: refuses an older file too.
    static func requireCurrentMonitorDatabase(_ db: Database, path: String) throws {
        guard try requireMonitorDatabase(db, path: path) == 0 else { throw OlderVersion(path: path) }
    }

    /// For the commands that open an existing file without migrating it (`prune`, `history`):
    /// refuses one of a newer version (`pendingMigrations` throws) or another program's.
    /// Returns how many migrations the file lacks.
    @discardableResult
    static func requireMonitorDatabase(_ db: Database, path: String) throws -> Int {
        let pending = try pendingMigrations(db)
        guard try db.userVersion > 0 else { throw NotAMonitorDatabase(path: path) }
        return pending
    }

    static let migrations: [Migration] = [
        """
        CREATE TABLE events (
            seq          INTEGER PRIMARY KEY,
            event_id     TEXT,              -- the client's idempotency key
            type         TEXT NOT NULL,
            activity_id  TEXT,
            booking_id   TEXT,              -- given, or inherited from the activity
            occurred_at  REAL NOT NULL,     -- Unix seconds
            received_at  REAL NOT NULL,
            body         TEXT NOT NULL      -- the event as ingested; push_token replaced by token_fingerprint
        );
        CREATE UNIQUE INDEX events_by_event_id ON events(event_id) WHERE event_id IS NOT NULL;
        CREATE INDEX events_by_activity ON events(activity_id, occurred_at, seq);
        CREATE INDEX events_by_booking ON events(booking_id, occurred_at, seq);
        CREATE INDEX events_by_occurred_at ON events(occurred_at);

        CREATE TABLE activities (
            activity_id          TEXT PRIMARY KEY,
            booking_id           TEXT,
            attributes_type      TEXT NOT NULL,
            app                  TEXT,
            source               TEXT NOT NULL,
            started_at           REAL NOT NULL,
            attributes           TEXT,
            content_state        TEXT,
            content_timestamp    REAL NOT NULL,
            stale_date           REAL,
            relevance_score      REAL,
            reported_stale       INTEGER NOT NULL,
            stale_counted        INTEGER NOT NULL,
            ended_at             REAL,
            ended_by             TEXT,
            dismissal_policy     TEXT,
            dismissal_date       REAL,
            dismissed_at         REAL,
            token_fingerprint    TEXT,
            token_rotations      INTEGER NOT NULL,
            token_rotated_at     REAL,
            token_invalid_reason TEXT,
            last_push_status     INTEGER,
            last_push_reason     TEXT,
            last_push_latency_ms REAL,
            last_push_priority   INTEGER,
            last_push_at         REAL,
            priority10_times     TEXT NOT NULL
        );
        CREATE INDEX activities_by_booking ON activities(booking_id);
        CREATE INDEX activities_live ON activities(dismissed_at) WHERE dismissed_at IS NULL;

        -- Persisted counters and histograms: key is SeriesKey.storageKey (since migration 7).
        CREATE TABLE counters (
            key       TEXT PRIMARY KEY,
            value     REAL NOT NULL,
            histogram TEXT                 -- "sum;count0;count1;…" (per bucket, not cumulative)
        ) WITHOUT ROWID;
        """,
        // `events.booking_id` now holds only a booking the client gave (an inherited one is in
        // the body): indexing the rest put a random page write into nearly every commit.
        """
        DROP INDEX events_by_booking;
        CREATE INDEX events_by_booking ON events(booking_id, occurred_at, seq) WHERE booking_id IS NOT NULL;
        """,
        // No SQL: `activities.priority10_times` now holds per-minute counts (Priority10Minutes).
        // Rows in the older forms are read as they are and rewritten at their next change; the
        // version keeps earlier programs, which would misread the new form, from opening the file.
        """
        -- priority10_times: per-minute counts
        """,
        // Dismissed activities are listed from here, newest start first, paged by (start, id):
        // ties on the start time need the id, and a filtered page reads on until it is full.
        // Only dismissed rows are in it, so a live activity's update writes none of its pages.
        """
        CREATE INDEX activities_dismissed ON activities(started_at DESC, activity_id) WHERE dismissed_at IS NOT NULL;
        """,
        // Live activities' rows and the counters are brought up to date about once a second, not
        // in every commit (DeferredWrites): they include the events up to `applied_seq`, and
        // start-up replays the rest. A file of an earlier version includes every event.
        """
        CREATE TABLE store_state (applied_seq INTEGER NOT NULL);
        INSERT INTO store_state SELECT coalesce(max(seq), 0) FROM events;
        """,
        // The events of each activity, filed when the tables catch up (about four times a second) rather
        // than by an index on `events`: single-event commits dirtied a leaf of that index per event,
        // one for each activity, and wrote it to the log in every commit (several times the log
        // bytes per event, PERFORMANCE.md). It holds the events up to `applied_seq`; readers
        // find the later ones by scanning the events after it (`EventStore+Reads`). Deleting an
        // event deletes its entry (retention, or anyone with `sqlite3`).
        """
        CREATE TABLE activity_events (
            activity_id TEXT NOT NULL,
            seq         INTEGER NOT NULL,
            PRIMARY KEY (activity_id, seq)
        ) WITHOUT ROWID;
        INSERT INTO activity_events
            SELECT activity_id, seq FROM events
            WHERE activity_id IS NOT NULL AND seq <= (SELECT applied_seq FROM store_state)
            ORDER BY activity_id, seq;
        DROP INDEX events_by_activity;
        CREATE TRIGGER activity_events_follow_deletes AFTER DELETE ON events WHEN old.activity_id IS NOT NULL
        BEGIN
            DELETE FROM activity_events WHERE activity_id = old.activity_id AND seq = old.seq;
        END;
        """,
        // Counter keys as JSON arrays: the first form joined label values with U+001F and
        // could not hold a value that contained it (CounterKeyMigrations).
        CounterKeyMigrations.firstFormToJSON,
        // The overflow label `other` becomes `(other)` (AttributesTypeLabels.other).
        CounterKeyMigrations.overflowRenamed,
        // Content shapes (DESIGN.md section 4): each attributes type's learned shape (the text
        // of `ObjectShape+Text`), written in the commit that learned it; and the verdict of each
        // push whose content would not decode, stored with the event so that every replay (the
        // read API's, start-up's) says what the writer decided and counted, whatever was learned
        // since. Deleting an event deletes its verdict.
        """
        CREATE TABLE content_shapes (
            attributes_type TEXT PRIMARY KEY,
            shape           TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE event_verdicts (
            seq    INTEGER PRIMARY KEY,
            detail TEXT NOT NULL
        );
        CREATE TRIGGER event_verdicts_follow_deletes AFTER DELETE ON events
        BEGIN
            DELETE FROM event_verdicts WHERE seq = old.seq;
        END;
        """,
        // Delivery evidence and push-to-start (DESIGN.md section 4): each activity's known
        // contents and verdicts (`DeliveryEvidence`, JSON); the push-to-start book
        // (`PushToStartBook`): start pushes waiting for their activity, each device's current
        // push-to-start token per type (a fingerprint; `device_id` is the app's opaque
        // installation id, never a label), the tokens newer ones superseded, and the start pushes
        // judged `superseded_token` when stored (read by replays; deleted with their event).
        """
        ALTER TABLE activities ADD COLUMN delivery TEXT;
        CREATE TABLE pending_start_pushes (
            seq             INTEGER PRIMARY KEY,   -- the start push's event
            booking_id      TEXT NOT NULL,
            attributes_type TEXT,
            sent_at         REAL NOT NULL,
            deadline        REAL NOT NULL
        );
        CREATE TABLE push_to_start_tokens (
            device_id       TEXT NOT NULL,
            attributes_type TEXT NOT NULL,
            fingerprint     TEXT NOT NULL,
            at              REAL NOT NULL,
            PRIMARY KEY (device_id, attributes_type)
        ) WITHOUT ROWID;
        CREATE TABLE superseded_push_to_start_tokens (fingerprint TEXT PRIMARY KEY) WITHOUT ROWID;
        CREATE TABLE start_push_verdicts (seq INTEGER PRIMARY KEY, why TEXT NOT NULL);
        CREATE TRIGGER start_push_verdicts_follow_deletes AFTER DELETE ON events WHEN old.type = 'push.sent'
        BEGIN
            DELETE FROM start_push_verdicts WHERE seq = old.seq;
        END;
        """,
        // On-call's triage (`GET /api/triage`): the latest push each activity's phone could not
        // decode, while the card still shows older content; and the start pushes of the last day
        // that started nothing (`PushToStartBook.unstarted`).
        """
        ALTER TABLE activities ADD COLUMN undecodable_at REAL;
        ALTER TABLE activities ADD COLUMN undecodable_detail TEXT;
        CREATE TABLE unstarted_start_pushes (
            seq             INTEGER PRIMARY KEY,   -- the start push's event
            booking_id      TEXT NOT NULL,
            attributes_type TEXT,
            sent_at         REAL NOT NULL,
            deadline        REAL NOT NULL
        );
        CREATE TRIGGER unstarted_start_pushes_follow_deletes AFTER DELETE ON events WHEN old.type = 'push.sent'
        BEGIN
            DELETE FROM unstarted_start_pushes WHERE seq = old.seq;
        END;
        """,
        // A scheduled start (`activity.started` `start_date`): `pending` until then.
        """
        ALTER TABLE activities ADD COLUMN start_date REAL;
        """,
        // Broadcasts (`push.sent` with `channel_id`): the channel an activity receives, and each
        // broadcast filed under the activities that received it, at its commit (it names none:
        // the activity's and booking's reads find it here, `EventStore+Reads`).
        """
        ALTER TABLE activities ADD COLUMN channel_id TEXT;
        CREATE TABLE broadcast_receivers (
            activity_id TEXT NOT NULL,
            seq         INTEGER NOT NULL,   -- the broadcast's event
            PRIMARY KEY (activity_id, seq)
        ) WITHOUT ROWID;
        CREATE INDEX broadcast_receivers_by_seq ON broadcast_receivers(seq);
        CREATE TRIGGER broadcast_receivers_follow_deletes AFTER DELETE ON events
            WHEN old.type = 'push.sent' AND old.activity_id IS NULL
        BEGIN
            DELETE FROM broadcast_receivers WHERE seq = old.seq;
        END;
        """,
        // Channel management (`channel.created`, `channel.deleted`): each channel as the book
        // knows it (`ChannelBook`), and the events that name it (requests and broadcasts) for
        // `/api/channels/{id}`.
        """
        CREATE TABLE channels (
            channel_id     TEXT PRIMARY KEY,
            storage_policy INTEGER,
            created_at     REAL,
            created_seq    INTEGER,
            deleted_at     REAL,
            deleted_seq    INTEGER,
            last_broadcast TEXT               -- JSON: ChannelBook.Broadcast
        ) WITHOUT ROWID;
        CREATE TABLE channel_events (
            channel_id TEXT NOT NULL,
            seq        INTEGER NOT NULL,
            PRIMARY KEY (channel_id, seq)
        ) WITHOUT ROWID;
        CREATE INDEX channel_events_by_seq ON channel_events(seq);
        CREATE TRIGGER channel_events_follow_deletes AFTER DELETE ON events WHEN old.activity_id IS NULL
        BEGIN
            DELETE FROM channel_events WHERE seq = old.seq;
        END;
        """,
        // Each live row's record in one column, which start-up reads alone
        // (`ActivityRecord.heldRecord`).
        ActivityRecord.heldRecordAdded,
        // Events filed under a number each activity gets when its row is inserted, in the
        // order rows were first written, rather than under its id: ids are random (ActivityKit's
        // UUIDs), so every new activity's entries went to a leaf of their own anywhere in
        // `activity_events`, and at a million activities nearly each was a page more in the log
        // (PERFORMANCE.md, session 33). Numbered, a new activity's entries follow the last one's.
        // `activity_events` keeps the events of activities without a row (and all of an older
        // file's); `filed_activity_events` reads both. A row's delete files its events under its
        // id again, so no entry is left under a number no row holds.
        """
        ALTER TABLE activities ADD COLUMN number INTEGER;
        ALTER TABLE store_state ADD COLUMN next_activity_number INTEGER NOT NULL DEFAULT 1;
        CREATE TABLE activity_events_numbered (
            number INTEGER NOT NULL,   -- activities.number
            seq    INTEGER NOT NULL,
            PRIMARY KEY (number, seq)
        ) WITHOUT ROWID;
        CREATE TRIGGER activities_numbered AFTER INSERT ON activities
        BEGIN
            UPDATE activities SET number = (SELECT next_activity_number FROM store_state) WHERE rowid = new.rowid;
            UPDATE store_state SET next_activity_number = next_activity_number + 1;
        END;
        CREATE TRIGGER activity_events_numbered_follow_row_deletes AFTER DELETE ON activities WHEN old.number IS NOT NULL
        BEGIN
            INSERT OR IGNORE INTO activity_events (activity_id, seq)
                SELECT old.activity_id, seq FROM activity_events_numbered WHERE number = old.number;
            DELETE FROM activity_events_numbered WHERE number = old.number;
        END;
        DROP TRIGGER IF EXISTS activity_events_follow_deletes;
        CREATE TRIGGER activity_events_follow_deletes AFTER DELETE ON events WHEN old.activity_id IS NOT NULL
        BEGIN
            DELETE FROM activity_events WHERE activity_id = old.activity_id AND seq = old.seq;
            DELETE FROM activity_events_numbered
                WHERE number = (SELECT number FROM activities WHERE activity_id = old.activity_id) AND seq = old.seq;
        END;
        CREATE VIEW filed_activity_events (activity_id, seq) AS
            SELECT activity_id, seq FROM activity_events
            UNION ALL
            SELECT a.activity_id, n.seq FROM activities a JOIN activity_events_numbered n ON n.number = a.number;
        """,
        // A booking the client gave that its activity's live row holds (`booking_in_row`; the
        // start of most activities) is found through that row (`activities_by_booking`), as the
        // activity's other events are: `events_by_booking` leaves it out, which spares a new
        // activity a random leaf of that index (PERFORMANCE.md, session 34). The column stays
        // the booking given, for replay. A row's delete gives its events their entries back
        // (each is filed by then: the commit that dismisses a row files every event before it).
        """
        ALTER TABLE events ADD COLUMN booking_in_row INTEGER;
        DROP INDEX events_by_booking;
        CREATE INDEX events_by_booking ON events(booking_id, occurred_at, seq)
            WHERE booking_id IS NOT NULL AND booking_in_row IS NULL;
        CREATE TRIGGER events_booking_in_row_follow_row_deletes AFTER DELETE ON activities
        BEGIN
            UPDATE events SET booking_in_row = NULL
            WHERE booking_in_row IS NOT NULL AND seq IN (
                SELECT seq FROM activity_events WHERE activity_id = old.activity_id
                UNION ALL
                SELECT seq FROM activity_events_numbered WHERE number = old.number);
        END;
        """,
        // A broadcast's verdicts (DESIGN.md section 4, "Channels"): the writer judges its content
        // once per attributes type of its subscribers; what a type could not decode is stored here
        // (a broadcast's own effect is the channel's, so `event_verdicts` has none), for every
        // replay to honour for each subscriber of that type. Types by their bytes (BINARY), as
        // the shapes keep them. Deleted with the broadcast. A broadcast stored before this has
        // none: its replays apply it to every subscriber, as they did.
        """
        CREATE TABLE broadcast_verdicts (
            seq             INTEGER NOT NULL,   -- the broadcast's event
            attributes_type TEXT NOT NULL,
            detail          TEXT NOT NULL,
            PRIMARY KEY (seq, attributes_type)
        ) WITHOUT ROWID;
        CREATE TRIGGER broadcast_verdicts_follow_deletes AFTER DELETE ON events
            WHEN old.type = 'push.sent' AND old.activity_id IS NULL
        BEGIN
            DELETE FROM broadcast_verdicts WHERE seq = old.seq;
        END;
        """,
    ]
}
