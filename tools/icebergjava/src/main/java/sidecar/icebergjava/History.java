package sidecar.icebergjava;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.File;
import java.io.IOException;
import java.io.StringWriter;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.PartitionField;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.UpdatePartitionSpec;
import org.apache.iceberg.UpdateSchema;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.BaseDVFileWriter;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.deletes.PositionDelete;
import org.apache.iceberg.deletes.PositionDeleteWriter;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.expressions.Literal;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.StructLikeWrapper;

/**
 * History writes one random table history and what Iceberg Java reads at
 * every commit and every snapshot.
 */
final class History {
  private final long seed;
  private final Random rnd;
  private final File dir;
  private final int formatVersion;
  private final LocalTableOperations ops;
  private Table table;
  private int task;
  private int columns;

  // The model: only what choosing the next operation needs (which files and
  // positions exist, their values by field id); the expectation is Iceberg
  // Java's reader, never this.
  private final List<FileState> files = new ArrayList<>();
  private final Map<String, DeleteFile> dvs = new HashMap<>();
  private final Map<String, TreeSet<Long>> dvPositions = new HashMap<>();
  private int idField;
  private int kField;
  private int sField;
  private long nextId = 1;
  // Columns equality deletes are keyed on: never dropped.
  private final java.util.Set<Integer> eqFields = new java.util.HashSet<>();


  private record FileState(DataFile file, List<Map<Integer, Object>> rows) {}

  private record Target(PartitionSpec spec, StructLike partition) {}

  History(long seed, File dir) {
    this.seed = seed;
    // Random's first draws from nearby seeds are alike (every seed from 1
    // to 40 would start with the same format version): mix the seed first.
    this.rnd = new Random(new SplittableRandom(seed).nextLong());
    this.dir = dir;
    this.formatVersion = rnd.nextBoolean() ? 2 : 3;
    this.ops = new LocalTableOperations(new File(dir, "table").getAbsolutePath());
  }

  void write() throws IOException {
    create();
    append();
    int n = 3 + rnd.nextInt(10);
    for (int i = 0; i < n; i++) {
      int op = rnd.nextInt(100);
      if (op < 20) {
        append();
      } else if (op < 35) {
        positionDelete();
      } else if (op < 55) {
        equalityDelete();
      } else if (op < 68) {
        update();
      } else if (op < 73) {
        copyOnWrite();
      } else if (op < 90) {
        evolveSchema();
      } else {
        evolveSpec();
      }
    }
    writeHistory();
  }

  /**
   * writeLongDefault writes the long-default scenario instead of a random
   * history: a format version 3 table given a long column whose
   * initial-default, 2^53 + 1, a float64 cannot hold.
   */
  void writeLongDefault() throws IOException {
    Schema schema = new Schema(
        Types.NestedField.required(1, "id", Types.LongType.get()),
        Types.NestedField.optional(2, "k", Types.IntegerType.get()),
        Types.NestedField.optional(3, "s", Types.StringType.get()));
    TableMetadata meta = TableMetadata.newTableMetadata(schema, PartitionSpec.unpartitioned(), SortOrder.unsorted(),
        new File(dir, "table").getAbsolutePath(), Map.of("format-version", "3"));
    ops.commit(null, meta);
    table = new BaseTable(ops, "java.long_default");
    idField = 1;
    kField = 2;
    sField = 3;
    record("create v3");
    List<Map<Integer, Object>> rows = new ArrayList<>();
    for (long id = 1; id <= 2; id++) {
      rows.add(Map.of(1, id, 2, 7, 3, "x"));
    }
    var append = table.newAppend();
    writeData(rows).forEach(append::appendFile);
    append.commit();
    record("append 2 rows");
    table.updateSchema().addColumn("big", Types.LongType.get(), Literal.of((1L << 53) + 1)).commit();
    record("add column big long default 2^53 + 1");
    writeHistory();
  }

  // --- the table ------------------------------------------------------------

  private void create() {
    List<Types.NestedField> fields = new ArrayList<>();
    int id = 1;
    fields.add(Types.NestedField.required(id++, "id", Types.LongType.get()));
    fields.add(Types.NestedField.optional(id++, "k", Types.IntegerType.get()));
    fields.add(Types.NestedField.optional(id++, "s", Types.StringType.get()));
    List<Type> extra = new ArrayList<>(List.of(
        Types.FloatType.get(), Types.DoubleType.get(), Types.DecimalType.of(9, 2),
        Types.DateType.get(), Types.TimestampType.withoutZone(), Types.TimestampType.withZone(),
        Types.BooleanType.get(), Types.BinaryType.get(), Types.UUIDType.get(), Types.FixedType.ofLength(3),
        Types.TimeType.get(), Types.IntegerType.get()));
    String[] names = {"f", "d", "dec", "dt", "ts", "tz", "b", "bin", "u", "fx", "tm", "i"};
    for (int i = 0; i < extra.size(); i++) {
      if (rnd.nextInt(10) < 7) {
        fields.add(Types.NestedField.optional(id++, names[i], extra.get(i)));
      }
    }
    if (formatVersion >= 3 && rnd.nextBoolean()) {
      fields.add(Types.NestedField.optional(id++, "tsn", Types.TimestampNanoType.withoutZone()));
    }
    if (rnd.nextBoolean()) {
      fields.add(Types.NestedField.optional(id++, "st", Types.StructType.of(
          Types.NestedField.optional(id++, "a", Types.IntegerType.get()),
          Types.NestedField.optional(id++, "b", Types.StringType.get()))));
    }
    if (rnd.nextBoolean()) {
      fields.add(Types.NestedField.optional(id++, "ls", Types.ListType.ofOptional(id++, Types.LongType.get())));
    }
    if (rnd.nextBoolean()) {
      fields.add(Types.NestedField.optional(id++, "mp",
          Types.MapType.ofOptional(id++, id++, Types.StringType.get(), Types.IntegerType.get())));
    }
    Schema schema = new Schema(fields);
    PartitionSpec.Builder spec = PartitionSpec.builderFor(schema);
    switch (rnd.nextInt(5)) {
      case 0 -> spec.identity("k");
      case 1 -> spec.bucket("id", 3);
      case 2 -> spec.truncate("s", 1);
      case 3 -> {
        if (schema.findField("ts") != null) {
          spec.day("ts");
        }
      }
      default -> {}
    }
    Map<String, String> props = new HashMap<>();
    props.put("format-version", Integer.toString(formatVersion));
    props.put("write.parquet.compression-codec", pick("zstd", "snappy", "gzip", "uncompressed"));
    if (rnd.nextBoolean()) {
      props.put("write.parquet.page-row-limit", Integer.toString(1 + rnd.nextInt(4)));
    }
    if (rnd.nextInt(4) == 0) {
      props.put("write.parquet.dict-size-bytes", "128");
    }
    TableMetadata meta = TableMetadata.newTableMetadata(schema, spec.build(), SortOrder.unsorted(),
        new File(dir, "table").getAbsolutePath(), props);
    ops.commit(null, meta);
    table = new BaseTable(ops, "java.h" + seed);
    idField = table.schema().findField("id").fieldId();
    kField = table.schema().findField("k").fieldId();
    sField = table.schema().findField("s").fieldId();
    record(String.format("create v%d, schema %s, spec %s", formatVersion, table.schema().asStruct(), table.spec()));
  }

  // --- operations -------------------------------------------------------------

  private void append() throws IOException {
    List<Map<Integer, Object>> rows = new ArrayList<>();
    int n = 1 + rnd.nextInt(8);
    for (int i = 0; i < n; i++) {
      rows.add(newRow(nextId++));
    }
    var append = table.newAppend();
    List<DataFile> written = writeData(rows);
    written.forEach(append::appendFile);
    append.commit();
    record("append " + n + " rows in " + written.size() + " files");
  }

  private void positionDelete() throws IOException {
    Map<String, TreeSet<Long>> chosen = choosePositions();
    if (chosen.isEmpty()) {
      return;
    }
    RowDelta delta = rowDelta();
    int count = addPositionDeletes(delta, chosen);
    delta.commit();
    record((formatVersion >= 3 ? "deletion vectors: " : "position deletes: ") + count + " rows of " + chosen.keySet());
  }

  private void equalityDelete() throws IOException {
    List<Integer> ids = new ArrayList<>();
    switch (rnd.nextInt(5)) {
      case 0 -> ids.add(idField);
      case 1 -> ids.add(kField);
      case 2 -> ids.add(sField);
      case 3 -> ids.addAll(List.of(kField, sField));
      default -> ids.addAll(List.of(idField, sField));
    }
    // Sometimes a column added later, which older files read by its
    // initial default (or as null).
    List<Integer> added = new ArrayList<>();
    for (Types.NestedField f : table.schema().columns()) {
      if (f.name().startsWith("c") && f.type().isPrimitiveType()) {
        added.add(f.fieldId());
      }
    }
    if (!added.isEmpty() && rnd.nextInt(3) == 0) {
      int c = added.get(rnd.nextInt(added.size()));
      if (rnd.nextBoolean()) {
        ids.clear();
      }
      ids.add(c);
    }
    eqFields.addAll(ids);
    List<Map<Integer, Object>> keys = new ArrayList<>();
    List<Map<Integer, Object>> live = liveRows();
    int n = 1 + rnd.nextInt(3);
    for (int i = 0; i < n; i++) {
      Map<Integer, Object> key = new HashMap<>();
      Map<Integer, Object> from = live.isEmpty() || rnd.nextInt(5) == 0 ? null : live.get(rnd.nextInt(live.size()));
      for (int id : ids) {
        Object v = from != null ? from.get(id) : (id != idField && rnd.nextInt(3) == 0 ? null : value(table.schema().findType(id), id));
        if (id != idField && rnd.nextInt(6) == 0) {
          v = null;
        }
        key.put(id, v);
      }
      keys.add(key);
    }
    RowDelta delta = rowDelta();
    List<DeleteFile> written = writeEqualityDeletes(ids, keys, equalityTargets(null));
    if (written.isEmpty()) {
      return;
    }
    written.forEach(delta::addDeletes);
    delta.commit();
    record("equality deletes on " + names(ids) + " of " + keys + " in " + written.size() + " files");
  }

  private void update() throws IOException {
    List<int[]> picks = new ArrayList<>();
    for (int f = 0; f < files.size(); f++) {
      for (int p = 0; p < files.get(f).rows().size(); p++) {
        if (!deleted(files.get(f).file().location(), p)) {
          picks.add(new int[] {f, p});
        }
      }
    }
    if (picks.isEmpty()) {
      return;
    }
    int n = 1 + rnd.nextInt(Math.min(3, picks.size()));
    List<Map<Integer, Object>> newRows = new ArrayList<>();
    Map<String, TreeSet<Long>> positions = new TreeMap<>();
    List<Map<Integer, Object>> keys = new ArrayList<>();
    List<FileState> touched = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      int[] pick = picks.remove(rnd.nextInt(picks.size()));
      FileState fs = files.get(pick[0]);
      Map<Integer, Object> old = fs.rows().get(pick[1]);
      long id = (Long) old.get(idField);
      Map<Integer, Object> row = newRow(id);
      // Keep some of the old values: an update changes a few columns.
      for (Map.Entry<Integer, Object> e : old.entrySet()) {
        if (row.containsKey(e.getKey()) && rnd.nextBoolean()) {
          row.put(e.getKey(), promote(table.schema().findType(e.getKey()), e.getValue()));
        }
      }
      newRows.add(row);
      positions.computeIfAbsent(fs.file().location(), x -> new TreeSet<>()).add((long) pick[1]);
      keys.add(Map.of(idField, id));
      touched.add(fs);
    }
    RowDelta delta = rowDelta();
    String how;
    if (rnd.nextBoolean()) {
      List<DeleteFile> eq = writeEqualityDeletes(List.of(idField), keys, equalityTargets(touched));
      eq.forEach(delta::addDeletes);
      how = "equality delete on id";
    } else {
      addPositionDeletes(delta, positions);
      how = formatVersion >= 3 ? "deletion vector" : "position delete";
    }
    writeData(newRows).forEach(delta::addRows);
    delta.commit();
    record("update " + n + " rows (" + how + " + insert), ids " + keys);
  }

  /**
   * copyOnWrite rewrites one data file without some of its rows, as a
   * copy-on-write delete does: the new file holds the rows the model has
   * live (rows an equality delete removed come back, as a writer that does
   * not read them first would bring them back), and the delete files that
   * named the old file stay behind, naming a file no snapshot has any more.
   */
  private void copyOnWrite() throws IOException {
    if (files.isEmpty()) {
      return;
    }
    FileState fs = files.get(rnd.nextInt(files.size()));
    List<Map<Integer, Object>> keep = new ArrayList<>();
    for (int p = 0; p < fs.rows().size(); p++) {
      if (!deleted(fs.file().location(), p) && rnd.nextInt(3) != 0) {
        Map<Integer, Object> row = new HashMap<>();
        for (Map.Entry<Integer, Object> e : fs.rows().get(p).entrySet()) {
          Type type = table.schema().findType(e.getKey());
          if (type != null) {
            row.put(e.getKey(), promote(type, e.getValue()));
          }
        }
        keep.add(row);
      }
    }
    var overwrite = table.newOverwrite().deleteFile(fs.file());
    files.remove(fs);
    if (!keep.isEmpty()) {
      writeData(keep).forEach(overwrite::addFile);
    }
    overwrite.commit();
    record("copy-on-write: rewrite " + fs.file().location() + " keeping " + keep.size() + " of " + fs.rows().size() + " rows");
  }

  private void evolveSchema() {
    Schema schema = table.schema();
    UpdateSchema u = table.updateSchema();
    String what;
    int op = rnd.nextInt(5);
    List<Types.NestedField> fields = schema.columns();
    if (op == 0 || op == 4) {
      String name = "c" + (++columns);
      Type type = pickType();
      if (formatVersion >= 3 && rnd.nextBoolean()) {
        Literal<?> def = defaultFor(type);
        u.addColumn(name, type, def);
        what = "add column " + name + " " + type + " default " + def;
      } else {
        u.addColumn(name, type);
        what = "add column " + name + " " + type;
      }
    } else if (op == 1) {
      Types.NestedField f = fields.get(rnd.nextInt(fields.size()));
      String to = f.name() + "_" + (++columns);
      u.renameColumn(f.name(), to);
      what = "rename " + f.name() + " to " + to;
    } else if (op == 2) {
      List<Types.NestedField> promotable = new ArrayList<>();
      for (Types.NestedField f : fields) {
        if (partitionSource(f.fieldId())) {
          // Iceberg Java then refuses the partition tuples of files written
          // before (an Integer where the spec now wants a Long) when a
          // delete file is written for their partition.
          continue;
        }
        switch (f.type().typeId()) {
          case INTEGER, FLOAT -> promotable.add(f);
          case DECIMAL -> {
            if (((Types.DecimalType) f.type()).precision() < 30) {
              promotable.add(f);
            }
          }
          default -> {}
        }
      }
      if (promotable.isEmpty()) {
        return;
      }
      Types.NestedField f = promotable.get(rnd.nextInt(promotable.size()));
      Type.PrimitiveType to = switch (f.type().typeId()) {
        case INTEGER -> Types.LongType.get();
        case FLOAT -> Types.DoubleType.get();
        default -> {
          Types.DecimalType d = (Types.DecimalType) f.type();
          yield Types.DecimalType.of(d.precision() + 1 + rnd.nextInt(8), d.scale());
        }
      };
      u.updateColumn(f.name(), to);
      what = "promote " + f.name() + " " + f.type() + " to " + to;
    } else {
      List<Types.NestedField> droppable = new ArrayList<>();
      for (Types.NestedField f : fields) {
        int id = f.fieldId();
        if (id != idField && id != kField && id != sField && !eqFields.contains(id) && !partitionSource(id)) {
          droppable.add(f);
        }
      }
      if (droppable.isEmpty()) {
        return;
      }
      Types.NestedField f = droppable.get(rnd.nextInt(droppable.size()));
      u.deleteColumn(f.name());
      what = "drop column " + f.name();
    }
    u.commit();
    record(what);
  }

  private void evolveSpec() {
    String what;
    try {
      what = changeSpec();
    } catch (IllegalArgumentException e) {
      // A field the spec already has, or one a former spec had under
      // another name: nothing to evolve.
      return;
    }
    if (what != null) {
      record(what + ": spec " + table.spec().specId() + " " + table.spec());
    }
  }

  private String changeSpec() {
    PartitionSpec spec = table.spec();
    UpdatePartitionSpec u = table.updateSpec();
    Schema schema = table.schema();
    String what;
    if (!spec.isUnpartitioned() && rnd.nextBoolean()) {
      PartitionField f = spec.fields().get(rnd.nextInt(spec.fields().size()));
      u.removeField(f.name());
      what = "remove partition field " + f.name();
    } else {
      String k = schema.findColumnName(kField);
      String s = schema.findColumnName(sField);
      String id = schema.findColumnName(idField);
      switch (rnd.nextInt(4)) {
        case 0 -> {
          u.addField(k);
          what = "partition by identity(" + k + ")";
        }
        case 1 -> {
          u.addField(Expressions.bucket(id, 2 + rnd.nextInt(3)));
          what = "partition by bucket(" + id + ")";
        }
        case 2 -> {
          u.addField(Expressions.truncate(s, 1 + rnd.nextInt(2)));
          what = "partition by truncate(" + s + ")";
        }
        default -> {
          Types.NestedField ts = null;
          for (Types.NestedField f : schema.columns()) {
            if (f.type().typeId() == Type.TypeID.TIMESTAMP || f.type().typeId() == Type.TypeID.DATE) {
              ts = f;
            }
          }
          if (ts == null) {
            return null;
          }
          u.addField(rnd.nextBoolean() ? Expressions.day(ts.name()) : Expressions.year(ts.name()));
          what = "partition by a time of " + ts.name();
        }
      }
    }
    u.commit();
    return what;
  }

  // --- writers ----------------------------------------------------------------

  /**
   * rowDelta starts a row delta validated from the current snapshot, as
   * engines do: from no snapshot, Iceberg takes every deletion vector ever
   * added for a data file as a concurrent one.
   */
  private RowDelta rowDelta() {
    RowDelta delta = table.newRowDelta();
    if (table.currentSnapshot() != null) {
      delta.validateFromSnapshot(table.currentSnapshot().snapshotId());
    }
    return delta;
  }

  /**
   * newOutputFile is a new file of the spec and partition; an unpartitioned
   * one is named as engines name it most of the time (data/NAME), and
   * sometimes as OutputFileFactory does given the empty partition
   * (data//NAME), which the delete files then spell the same way.
   */
  private org.apache.iceberg.encryption.EncryptedOutputFile newOutputFile(
      FileFormat format, PartitionSpec spec, StructLike partition) {
    OutputFileFactory f = outputs(format);
    if (spec.isUnpartitioned() && rnd.nextInt(4) != 0) {
      return f.newOutputFile();
    }
    return f.newOutputFile(spec, partition);
  }

  private OutputFileFactory outputs(FileFormat format) {
    return OutputFileFactory.builderFor(table, 1, ++task).format(format).build();
  }

  private List<DataFile> writeData(List<Map<Integer, Object>> rows) throws IOException {
    Schema schema = table.schema();
    PartitionSpec spec = table.spec();
    // Rows split into up to three files, each file by partition.
    int nfiles = 1 + rnd.nextInt(Math.min(3, rows.size()));
    Map<StructLikeWrapper, List<Map<Integer, Object>>> groups = new LinkedHashMap<>();
    Map<StructLikeWrapper, PartitionKey> keys = new HashMap<>();
    PartitionKey pk = new PartitionKey(spec, schema);
    InternalRecordWrapper internal = new InternalRecordWrapper(schema.asStruct());
    for (int i = 0; i < rows.size(); i++) {
      pk.partition(internal.wrap(record(schema, rows.get(i))));
      PartitionKey key = pk.copy();
      // The file index joins the partition in the group's key.
      GenericRecord slot = GenericRecord.create(Types.StructType.of(
          Types.NestedField.optional(1, "p", Types.StringType.get()),
          Types.NestedField.optional(2, "n", Types.IntegerType.get())));
      slot.set(0, key.toPath());
      slot.set(1, i % nfiles);
      StructLikeWrapper w = StructLikeWrapper.forType(slot.struct()).set(slot);
      groups.computeIfAbsent(w, x -> new ArrayList<>()).add(rows.get(i));
      keys.put(w, key);
    }
    GenericFileWriterFactory factory = new GenericFileWriterFactory.Builder(table)
        .dataFileFormat(FileFormat.PARQUET).build();
    List<DataFile> out = new ArrayList<>();
    for (Map.Entry<StructLikeWrapper, List<Map<Integer, Object>>> g : groups.entrySet()) {
      PartitionKey key = keys.get(g.getKey());
      StructLike partition = spec.isUnpartitioned() ? null : key;
      DataWriter<Record> w = factory.newDataWriter(newOutputFile(FileFormat.PARQUET, spec, partition), spec, partition);
      try (w) {
        for (Map<Integer, Object> row : g.getValue()) {
          w.write(record(schema, row));
        }
      }
      DataFile df = w.toDataFile();
      files.add(new FileState(df, g.getValue()));
      out.add(df);
    }
    return out;
  }

  /** choosePositions picks rows of one or two data files to delete. */
  private Map<String, TreeSet<Long>> choosePositions() {
    Map<String, TreeSet<Long>> chosen = new TreeMap<>();
    if (files.isEmpty()) {
      return chosen;
    }
    int nf = 1 + rnd.nextInt(Math.min(2, files.size()));
    for (int i = 0; i < nf; i++) {
      FileState fs = files.get(rnd.nextInt(files.size()));
      int rows = fs.rows().size();
      int n = 1 + rnd.nextInt(Math.max(1, rows / 2 + 1));
      for (int j = 0; j < n; j++) {
        chosen.computeIfAbsent(fs.file().location(), x -> new TreeSet<>()).add((long) rnd.nextInt(rows));
      }
    }
    return chosen;
  }

  /**
   * addPositionDeletes adds deletes of the chosen positions to delta: position
   * delete files, one a partition, for format version 2; deletion vectors for
   * 3, each replacing the data file's former vector with the union of both.
   */
  private int addPositionDeletes(RowDelta delta, Map<String, TreeSet<Long>> chosen) throws IOException {
    int count = 0;
    if (formatVersion >= 3) {
      BaseDVFileWriter dv = new BaseDVFileWriter(outputs(FileFormat.PUFFIN), path -> null);
      try (dv) {
        for (Map.Entry<String, TreeSet<Long>> e : chosen.entrySet()) {
          DataFile df = fileAt(e.getKey());
          TreeSet<Long> all = new TreeSet<>(dvPositions.getOrDefault(e.getKey(), new TreeSet<>()));
          all.addAll(e.getValue());
          for (long pos : all) {
            dv.delete(df.location(), pos, table.specs().get(df.specId()), df.partition());
          }
          count += e.getValue().size();
        }
      }
      for (DeleteFile d : dv.result().deleteFiles()) {
        String path = d.referencedDataFile();
        DeleteFile old = dvs.get(path);
        if (old != null) {
          delta.removeDeletes(old);
        }
        dvs.put(path, d);
        dvPositions.computeIfAbsent(path, x -> new TreeSet<>()).addAll(chosen.get(path));
        delta.addDeletes(d);
      }
      return count;
    }
    Map<Target, List<Map.Entry<String, TreeSet<Long>>>> byPartition = new LinkedHashMap<>();
    Map<String, Target> seen = new HashMap<>();
    for (Map.Entry<String, TreeSet<Long>> e : chosen.entrySet()) {
      DataFile df = fileAt(e.getKey());
      PartitionSpec spec = table.specs().get(df.specId());
      String key = df.specId() + "/" + spec.partitionToPath(df.partition());
      Target t = seen.computeIfAbsent(key, x -> new Target(spec, df.partition()));
      byPartition.computeIfAbsent(t, x -> new ArrayList<>()).add(e);
      count += e.getValue().size();
    }
    GenericFileWriterFactory factory = new GenericFileWriterFactory.Builder(table)
        .deleteFileFormat(FileFormat.PARQUET).build();
    for (Map.Entry<Target, List<Map.Entry<String, TreeSet<Long>>>> g : byPartition.entrySet()) {
      Target t = g.getKey();
      StructLike partition = t.spec().isUnpartitioned() ? null : t.partition();
      PositionDeleteWriter<Record> w = factory.newPositionDeleteWriter(
          newOutputFile(FileFormat.PARQUET, t.spec(), partition), t.spec(), partition);
      try (w) {
        PositionDelete<Record> pd = PositionDelete.create();
        for (Map.Entry<String, TreeSet<Long>> e : g.getValue()) {
          for (long pos : e.getValue()) {
            w.write(pd.set(e.getKey(), pos));
          }
        }
      }
      delta.addDeletes(w.toDeleteFile());
    }
    for (Map.Entry<String, TreeSet<Long>> e : chosen.entrySet()) {
      dvPositions.computeIfAbsent(e.getKey(), x -> new TreeSet<>()).addAll(e.getValue());
    }
    return count;
  }

  /**
   * equalityTargets is where equality deletes go: the whole table through an
   * unpartitioned spec where the table has one (half the time), else the
   * partitions of the given files (all live files when null).
   */
  private List<Target> equalityTargets(List<FileState> of) {
    for (PartitionSpec spec : table.specs().values()) {
      if (spec.isUnpartitioned() && (table.spec().isUnpartitioned() || rnd.nextBoolean())) {
        return List.of(new Target(spec, null));
      }
    }
    Map<String, Target> targets = new LinkedHashMap<>();
    for (FileState fs : of != null ? of : files) {
      DataFile df = fs.file();
      PartitionSpec spec = table.specs().get(df.specId());
      targets.putIfAbsent(df.specId() + "/" + spec.partitionToPath(df.partition()), new Target(spec, df.partition()));
    }
    List<Target> out = new ArrayList<>(targets.values());
    if (of == null && out.size() > 1) {
      // Some partitions only: the others keep their rows.
      out.removeIf(t -> rnd.nextInt(3) == 0);
    }
    return out;
  }

  private List<DeleteFile> writeEqualityDeletes(List<Integer> ids, List<Map<Integer, Object>> keys, List<Target> targets)
      throws IOException {
    Schema schema = table.schema();
    int[] fieldIds = ids.stream().mapToInt(Integer::intValue).toArray();
    Schema deleteSchema = schema.select(names(ids));
    GenericFileWriterFactory factory = new GenericFileWriterFactory.Builder(table)
        .deleteFileFormat(FileFormat.PARQUET)
        .equalityFieldIds(fieldIds)
        .equalityDeleteRowSchema(deleteSchema)
        .build();
    List<DeleteFile> out = new ArrayList<>();
    for (Target t : targets) {
      StructLike partition = t.spec().isUnpartitioned() ? null : t.partition();
      EqualityDeleteWriter<Record> w = factory.newEqualityDeleteWriter(
          newOutputFile(FileFormat.PARQUET, t.spec(), partition), t.spec(), partition);
      try (w) {
        for (Map<Integer, Object> key : keys) {
          w.write(record(deleteSchema, key));
        }
      }
      out.add(w.toDeleteFile());
    }
    return out;
  }

  // --- the model --------------------------------------------------------------

  private DataFile fileAt(String path) {
    for (FileState fs : files) {
      if (fs.file().location().equals(path)) {
        return fs.file();
      }
    }
    throw new IllegalStateException("no data file " + path);
  }

  private boolean deleted(String path, int pos) {
    TreeSet<Long> d = dvPositions.get(path);
    return d != null && d.contains((long) pos);
  }

  private List<Map<Integer, Object>> liveRows() {
    List<Map<Integer, Object>> out = new ArrayList<>();
    for (FileState fs : files) {
      for (int p = 0; p < fs.rows().size(); p++) {
        if (!deleted(fs.file().location(), p)) {
          Map<Integer, Object> row = new HashMap<>();
          for (Map.Entry<Integer, Object> e : fs.rows().get(p).entrySet()) {
            Type type = table.schema().findType(e.getKey());
            if (type != null) {
              row.put(e.getKey(), promote(type, e.getValue()));
            }
          }
          out.add(row);
        }
      }
    }
    return out;
  }

  private boolean partitionSource(int fieldId) {
    for (PartitionSpec spec : table.specs().values()) {
      for (PartitionField f : spec.fields()) {
        if (f.sourceId() == fieldId) {
          return true;
        }
      }
    }
    return false;
  }

  private List<String> names(List<Integer> ids) {
    List<String> out = new ArrayList<>();
    for (int id : ids) {
      out.add(table.schema().findColumnName(id));
    }
    return out;
  }

  // --- values -----------------------------------------------------------------

  private Map<Integer, Object> newRow(long id) {
    Map<Integer, Object> row = new HashMap<>();
    for (Types.NestedField f : table.schema().columns()) {
      if (f.fieldId() == idField) {
        row.put(f.fieldId(), id);
      } else if (f.fieldId() == kField) {
        row.put(f.fieldId(), rnd.nextInt(6) == 0 ? null : promote(f.type(), rnd.nextInt(4)));
      } else if (f.fieldId() == sField) {
        row.put(f.fieldId(), rnd.nextInt(6) == 0 ? null : pick("a", "b", "c", "ä", ""));
      } else {
        row.put(f.fieldId(), rnd.nextInt(7) == 0 ? null : value(f.type(), f.fieldId()));
      }
    }
    return row;
  }

  private static Record record(Schema schema, Map<Integer, Object> row) {
    GenericRecord r = GenericRecord.create(schema);
    List<Types.NestedField> fields = schema.columns();
    for (int i = 0; i < fields.size(); i++) {
      r.set(i, promote(fields.get(i).type(), row.get(fields.get(i).fieldId())));
    }
    return r;
  }

  /** promote reads a value written under an older type as the field's type now. */
  private static Object promote(Type type, Object v) {
    if (v instanceof Integer i && type.typeId() == Type.TypeID.LONG) {
      return i.longValue();
    }
    if (v instanceof Float f && type.typeId() == Type.TypeID.DOUBLE) {
      return f.doubleValue();
    }
    return v;
  }

  private Object value(Type type, int fieldId) {
    return switch (type.typeId()) {
      case BOOLEAN -> rnd.nextBoolean();
      case INTEGER -> rnd.nextInt(10) == 0 ? pick(Integer.MIN_VALUE, Integer.MAX_VALUE, 0) : rnd.nextInt(2001) - 1000;
      case LONG -> rnd.nextInt(10) == 0 ? pick(Long.MIN_VALUE, Long.MAX_VALUE) : rnd.nextLong() >> rnd.nextInt(64);
      case FLOAT -> rnd.nextInt(4) == 0
          ? pick(0.1f, -0.0f, Float.NaN, Float.POSITIVE_INFINITY, 1e-7f, Float.MAX_VALUE, Float.MIN_VALUE, 16777217f)
          : (float) (rnd.nextGaussian() * Math.pow(10, rnd.nextInt(12) - 6));
      case DOUBLE -> rnd.nextInt(4) == 0
          ? pick(0.1, -0.0, Double.NaN, Double.NEGATIVE_INFINITY, 1e-300, Double.MAX_VALUE, 1e21, 123456789012345678.0)
          : rnd.nextGaussian() * Math.pow(10, rnd.nextInt(30) - 15);
      case DECIMAL -> {
        Types.DecimalType d = (Types.DecimalType) type;
        BigInteger unscaled = new BigInteger(Math.min(60, d.precision() * 3), rnd)
            .mod(BigInteger.TEN.pow(d.precision()));
        yield new BigDecimal(rnd.nextBoolean() ? unscaled : unscaled.negate(), d.scale());
      }
      case DATE -> LocalDate.ofEpochDay(rnd.nextInt(60000) - 30000);
      case TIME -> LocalTime.ofNanoOfDay((long) rnd.nextInt(86_400_000) * 1_000_000L + rnd.nextInt(1000) * 1000L);
      case TIMESTAMP -> {
        long micros = rnd.nextInt(5) == 0 ? pick(-500L, -1500L, 999L, 0L, -1L) : (rnd.nextLong() % 4_000_000_000_000_000L);
        LocalDateTime t = LocalDateTime.ofEpochSecond(Math.floorDiv(micros, 1_000_000L),
            (int) Math.floorMod(micros, 1_000_000L) * 1000, ZoneOffset.UTC);
        yield ((Types.TimestampType) type).shouldAdjustToUTC() ? t.atOffset(ZoneOffset.UTC) : t;
      }
      case TIMESTAMP_NANO -> {
        long nanos = rnd.nextInt(5) == 0 ? pick(-500L, -1_500_001L, 999_999L, 0L) : rnd.nextLong();
        LocalDateTime t = LocalDateTime.ofEpochSecond(Math.floorDiv(nanos, 1_000_000_000L),
            (int) Math.floorMod(nanos, 1_000_000_000L), ZoneOffset.UTC);
        yield ((Types.TimestampNanoType) type).shouldAdjustToUTC() ? t.atOffset(ZoneOffset.UTC) : t;
      }
      case STRING -> pick("x", "", "héllo", "tab\there", "quote\"", "😀", "line\nbreak") + rnd.nextInt(100);
      case UUID -> new UUID(rnd.nextLong(), rnd.nextLong());
      case FIXED -> {
        byte[] b = new byte[((Types.FixedType) type).length()];
        rnd.nextBytes(b);
        yield b;
      }
      case BINARY -> {
        byte[] b = new byte[rnd.nextInt(6)];
        rnd.nextBytes(b);
        yield ByteBuffer.wrap(b);
      }
      case STRUCT -> {
        GenericRecord r = GenericRecord.create(type.asStructType());
        List<Types.NestedField> fs = type.asStructType().fields();
        for (int i = 0; i < fs.size(); i++) {
          r.set(i, rnd.nextInt(5) == 0 ? null : value(fs.get(i).type(), fs.get(i).fieldId()));
        }
        yield r;
      }
      case LIST -> {
        List<Object> l = new ArrayList<>();
        int n = rnd.nextInt(4);
        for (int i = 0; i < n; i++) {
          l.add(rnd.nextInt(5) == 0 ? null : value(type.asListType().elementType(), 0));
        }
        yield l;
      }
      case MAP -> {
        Map<Object, Object> m = new LinkedHashMap<>();
        int n = rnd.nextInt(4);
        for (int i = 0; i < n; i++) {
          m.put("k" + rnd.nextInt(10), rnd.nextInt(5) == 0 ? null : value(type.asMapType().valueType(), 0));
        }
        yield m;
      }
      default -> throw new IllegalArgumentException("no values for " + type + " of field " + fieldId);
    };
  }

  private Type pickType() {
    return switch (rnd.nextInt(8)) {
      case 0 -> Types.IntegerType.get();
      case 1 -> Types.LongType.get();
      case 2 -> Types.StringType.get();
      case 3 -> Types.DoubleType.get();
      case 4 -> Types.DateType.get();
      case 5 -> Types.TimestampType.withoutZone();
      case 6 -> Types.DecimalType.of(7, 3);
      default -> Types.BooleanType.get();
    };
  }

  private Literal<?> defaultFor(Type type) {
    return switch (type.typeId()) {
      case INTEGER -> Literal.of(rnd.nextInt(2001) - 1000);
      // Within ±2^53: iceberg-go v0.7.0 reads every initial-default through
      // a float64, so a larger long default reads rounded in the sidecar
      // (docs/values.md); the long-default scenario keeps that in view.
      case LONG -> Literal.of(rnd.nextLong() >> 11);
      case STRING -> Literal.of(pick("dflt", "", "ü"));
      case DOUBLE -> Literal.of(pick(0.1, -2.5, 1e20));
      case DATE -> Literal.of(pick("2024-02-29", "1969-12-31", "1970-01-01")).to(Types.DateType.get());
      case TIMESTAMP -> Literal.of(pick("2024-02-29T10:11:12.345678", "1969-12-31T23:59:59.999500"))
          .to(Types.TimestampType.withoutZone());
      case DECIMAL -> Literal.of(new BigDecimal(pick("1234.567", "-0.001", "0.000")));
      case BOOLEAN -> Literal.of(rnd.nextBoolean());
      default -> throw new IllegalArgumentException("no default for " + type);
    };
  }

  @SafeVarargs
  private <T> T pick(T... choices) {
    return choices[rnd.nextInt(choices.length)];
  }

  // --- what Iceberg Java reads ------------------------------------------------

  private final List<Map<String, Object>> commits = new ArrayList<>();

  /** record notes a commit: its metadata file and what the table reads as now. */
  private void record(String what) {
    Map<String, Object> c = new LinkedHashMap<>();
    c.put("what", what);
    c.put("metadata", ops.current().metadataFileLocation());
    Snapshot s = table.currentSnapshot();
    c.put("snapshotId", s == null ? null : s.snapshotId());
    c.put("rows", s == null ? List.of() : read(table.schema(), null));
    commits.add(c);
  }

  private List<String> read(Schema schema, Long snapshotId) {
    return read(table, schema, snapshotId, true);
  }

  /**
   * read is every row Iceberg Java's generic reader returns at the snapshot
   * (the current one when null) under schema, encoded by the value contract;
   * with metadata, also _file and _pos, and on format version 3 the
   * row-lineage columns.
   */
  static List<String> read(Table table, Schema schema, Long snapshotId, boolean metadata) {
    List<Types.NestedField> cols = new ArrayList<>(schema.columns());
    if (metadata) {
      if (((BaseTable) table).operations().current().formatVersion() >= 3) {
        cols.add(MetadataColumns.ROW_ID);
        cols.add(MetadataColumns.LAST_UPDATED_SEQUENCE_NUMBER);
      }
      cols.add(MetadataColumns.FILE_PATH);
      cols.add(MetadataColumns.ROW_POSITION);
    }
    Schema projection = new Schema(cols);
    IcebergGenerics.ScanBuilder scan = IcebergGenerics.read(table).project(projection);
    if (snapshotId != null) {
      scan = scan.useSnapshot(snapshotId);
    }
    List<String> rows = new ArrayList<>();
    JsonFactory json = new JsonFactory();
    try (CloseableIterable<Record> it = scan.build()) {
      for (Record r : it) {
        StringWriter sw = new StringWriter();
        try (JsonGenerator g = json.createGenerator(sw)) {
          g.writeStartObject();
          for (Types.NestedField f : projection.columns()) {
            g.writeFieldName(f.name());
            Values.write(g, f.type(), r.getField(f.name()));
          }
          g.writeEndObject();
        }
        rows.add(sw.toString());
      }
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    return rows;
  }

  private void writeHistory() throws IOException {
    JsonFactory json = new JsonFactory();
    try (JsonGenerator g = json.createGenerator(new File(dir, "history.json"), JsonEncoding.UTF8)) {
      g.writeStartObject();
      g.writeNumberField("seed", seed);
      g.writeNumberField("formatVersion", formatVersion);
      g.writeArrayFieldStart("commits");
      for (Map<String, Object> c : commits) {
        g.writeStartObject();
        g.writeStringField("what", (String) c.get("what"));
        g.writeStringField("metadata", (String) c.get("metadata"));
        if (c.get("snapshotId") != null) {
          g.writeNumberField("snapshotId", (Long) c.get("snapshotId"));
        }
        writeRows(g, castRows(c.get("rows")));
        g.writeEndObject();
      }
      g.writeEndArray();
      // Time travel: every snapshot by id, under the schema it was written with.
      g.writeArrayFieldStart("snapshots");
      for (Snapshot s : table.snapshots()) {
        g.writeStartObject();
        g.writeNumberField("snapshotId", s.snapshotId());
        writeRows(g, read(table.schemas().get(s.schemaId()), s.snapshotId()));
        g.writeEndObject();
      }
      g.writeEndArray();
      g.writeEndObject();
    }
  }

  @SuppressWarnings("unchecked")
  private static List<String> castRows(Object o) {
    return (List<String>) o;
  }

  private static void writeRows(JsonGenerator g, List<String> rows) throws IOException {
    g.writeArrayFieldStart("rows");
    for (String r : rows) {
      g.writeRawValue(r);
    }
    g.writeEndArray();
  }
}
