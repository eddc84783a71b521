package sidecar.icebergjava;

import java.io.IOException;
import java.io.OutputStream;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.io.SeekableInputStream;

/**
 * LocalFileIO reads and writes plain absolute paths on the local file system,
 * so that the metadata, manifests and delete files name every file as the
 * sidecar's local FileIO opens it (no Hadoop, no "file:" scheme).
 */
final class LocalFileIO implements FileIO {
  /** path is the local path a location names: a plain path or a file: URI (iceberg-go's). */
  static Path path(String location) {
    if (location.startsWith("file:")) {
      return Path.of(java.net.URI.create(location));
    }
    return Path.of(location);
  }

  @Override
  public InputFile newInputFile(String path) {
    return new Input(path);
  }

  @Override
  public OutputFile newOutputFile(String path) {
    return new Output(path);
  }

  @Override
  public void deleteFile(String path) {
    try {
      Files.deleteIfExists(path(path));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private record Input(String location) implements InputFile {
    @Override
    public long getLength() {
      try {
        return Files.size(path(location));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    @Override
    public SeekableInputStream newStream() {
      try {
        RandomAccessFile f = new RandomAccessFile(path(location).toFile(), "r");
        return new SeekableInputStream() {
          @Override
          public long getPos() throws IOException {
            return f.getFilePointer();
          }

          @Override
          public void seek(long pos) throws IOException {
            f.seek(pos);
          }

          @Override
          public int read() throws IOException {
            return f.read();
          }

          @Override
          public int read(byte[] b, int off, int len) throws IOException {
            return f.read(b, off, len);
          }

          @Override
          public void close() throws IOException {
            f.close();
          }
        };
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    @Override
    public boolean exists() {
      return Files.exists(path(location));
    }
  }

  private record Output(String location) implements OutputFile {
    @Override
    public PositionOutputStream create() {
      return open(StandardOpenOption.CREATE_NEW);
    }

    @Override
    public PositionOutputStream createOrOverwrite() {
      return open(StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING);
    }

    private PositionOutputStream open(StandardOpenOption... opts) {
      try {
        Path p = path(location);
        Files.createDirectories(p.getParent());
        OutputStream out = Files.newOutputStream(p, append(opts, StandardOpenOption.WRITE));
        return new PositionOutputStream() {
          private long pos;

          @Override
          public long getPos() {
            return pos;
          }

          @Override
          public void write(int b) throws IOException {
            out.write(b);
            pos++;
          }

          @Override
          public void write(byte[] b, int off, int len) throws IOException {
            out.write(b, off, len);
            pos += len;
          }

          @Override
          public void flush() throws IOException {
            out.flush();
          }

          @Override
          public void close() throws IOException {
            out.close();
          }
        };
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    private static StandardOpenOption[] append(StandardOpenOption[] opts, StandardOpenOption o) {
      StandardOpenOption[] out = java.util.Arrays.copyOf(opts, opts.length + 1);
      out[opts.length] = o;
      return out;
    }

    @Override
    public InputFile toInputFile() {
      return new Input(location);
    }
  }
}
