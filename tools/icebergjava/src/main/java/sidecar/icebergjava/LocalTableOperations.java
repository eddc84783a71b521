package sidecar.icebergjava;

import java.util.Locale;
import org.apache.iceberg.LocationProviders;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableMetadataParser;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.LocationProvider;

/**
 * LocalTableOperations keeps one table in a folder without a catalog: every
 * commit writes metadata/vN.metadata.json, which is what the sidecar's static
 * catalog serves a table by.
 */
final class LocalTableOperations implements TableOperations {
  private final FileIO io = new LocalFileIO();
  private final String location;
  private TableMetadata current;
  private int version;

  LocalTableOperations(String location) {
    this.location = location;
  }

  @Override
  public TableMetadata current() {
    return current;
  }

  @Override
  public TableMetadata refresh() {
    return current;
  }

  @Override
  public void commit(TableMetadata base, TableMetadata metadata) {
    if (base != current) {
      throw new CommitFailedException("stale base metadata");
    }
    String path = metadataFileLocation(String.format(Locale.ROOT, "v%d.metadata.json", ++version));
    TableMetadataParser.write(metadata, io.newOutputFile(path));
    current = TableMetadataParser.read(io, path);
  }

  @Override
  public FileIO io() {
    return io;
  }

  @Override
  public String metadataFileLocation(String fileName) {
    return location + "/metadata/" + fileName;
  }

  @Override
  public LocationProvider locationProvider() {
    return LocationProviders.locationsFor(current.location(), current.properties());
  }
}
