package sidecar.icebergjava;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StaticTableOperations;
import org.apache.iceberg.Table;

/**
 * Reader reads tables another writer wrote (the suite's iceberg-go tables)
 * with Iceberg Java's generic reader: every snapshot of each metadata file,
 * under the snapshot's schema, table columns only.
 */
final class Reader {
  private Reader() {}

  /** read writes out, {"tables":[{"metadata", "error"?, "snapshots":[{"snapshotId","rows"}]}]}. */
  static void read(File out, String[] metadataFiles) throws IOException {
    JsonFactory json = new JsonFactory();
    try (JsonGenerator g = json.createGenerator(out, JsonEncoding.UTF8)) {
      g.writeStartObject();
      g.writeArrayFieldStart("tables");
      for (String metadata : metadataFiles) {
        g.writeStartObject();
        g.writeStringField("metadata", metadata);
        g.writeArrayFieldStart("snapshots");
        String error = null;
        try {
          Table table = new BaseTable(new StaticTableOperations(metadata, new LocalFileIO()), metadata);
          for (Snapshot s : table.snapshots()) {
            // Rows first, so that a snapshot Java cannot read leaves no half entry.
            var rows = History.read(table, table.schemas().get(s.schemaId()), s.snapshotId(), false);
            g.writeStartObject();
            g.writeNumberField("snapshotId", s.snapshotId());
            g.writeArrayFieldStart("rows");
            for (String r : rows) {
              g.writeRawValue(r);
            }
            g.writeEndArray();
            g.writeEndObject();
          }
        } catch (RuntimeException e) {
          StringWriter sw = new StringWriter();
          e.printStackTrace(new PrintWriter(sw));
          error = sw.toString();
        }
        g.writeEndArray();
        if (error != null) {
          g.writeStringField("error", error);
        }
        g.writeEndObject();
      }
      g.writeEndArray();
      g.writeEndObject();
    }
  }
}
