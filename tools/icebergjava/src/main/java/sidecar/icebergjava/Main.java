package sidecar.icebergjava;

import java.io.File;

/**
 * Main writes random Iceberg table histories with Iceberg Java, one folder a
 * seed, each with history.json: every commit's metadata file and the rows
 * Iceberg Java's generic reader returns for it.
 *
 * <pre>java -cp … sidecar.icebergjava.Main OUT FIRST_SEED COUNT
 * java -cp … sidecar.icebergjava.Main OUT long-default
 * java -cp … sidecar.icebergjava.Main read OUT.json METADATA_FILE…</pre>
 *
 * The second writes one fixed history into OUT/long-default instead (see
 * History.writeLongDefault); the third reads every snapshot of tables other
 * writers wrote (Reader).
 */
public final class Main {
  private Main() {}

  public static void main(String[] args) throws Exception {
    if (args.length >= 1 && args[0].equals("read")) {
      Reader.read(new File(args[1]), java.util.Arrays.copyOfRange(args, 2, args.length));
      return;
    }
    if (args.length == 2 && args[1].equals("long-default")) {
      new History(0, new File(args[0], "long-default")).writeLongDefault();
      return;
    }
    if (args.length != 3) {
      System.err.println("usage: Main OUT FIRST_SEED COUNT");
      System.exit(2);
    }
    File out = new File(args[0]);
    long first = Long.parseLong(args[1]);
    int count = Integer.parseInt(args[2]);
    for (long seed = first; seed < first + count; seed++) {
      File dir = new File(out, "h" + seed);
      try {
        new History(seed, dir).write();
      } catch (Exception | AssertionError e) {
        throw new RuntimeException("history of seed " + seed, e);
      }
    }
  }
}
