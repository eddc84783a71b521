package sidecar.icebergjava;

import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Values writes Iceberg Java's generic values as the sidecar's value contract
 * (docs/values.md) says: timestamps as epoch milliseconds truncated toward
 * zero, dates as epoch milliseconds of midnight, decimals as exact strings,
 * binary as base64, floats as the shortest decimal of their own width, NaN and
 * the infinities as null.
 */
final class Values {
  private Values() {}

  static void write(JsonGenerator g, Type type, Object v) throws IOException {
    if (v == null) {
      g.writeNull();
      return;
    }
    switch (type.typeId()) {
      case BOOLEAN -> g.writeBoolean((Boolean) v);
      case INTEGER, LONG -> g.writeNumber(((Number) v).longValue());
      case FLOAT -> {
        float f = (Float) v;
        if (Float.isNaN(f) || Float.isInfinite(f)) {
          g.writeNull();
        } else {
          g.writeNumber(shortest(f, true));
        }
      }
      case DOUBLE -> {
        double d = (Double) v;
        if (Double.isNaN(d) || Double.isInfinite(d)) {
          g.writeNull();
        } else {
          g.writeNumber(shortest(d, false));
        }
      }
      case DECIMAL -> g.writeString(((BigDecimal) v).toPlainString());
      case DATE -> g.writeNumber(((LocalDate) v).toEpochDay() * 86_400_000L);
      case TIME -> g.writeNumber(((LocalTime) v).toNanoOfDay() / 1000);
      case TIMESTAMP, TIMESTAMP_NANO -> g.writeNumber(millis(instant(v)));
      case STRING, UUID -> g.writeString(v.toString());
      case FIXED -> g.writeString(Base64.getEncoder().encodeToString((byte[]) v));
      case BINARY -> {
        ByteBuffer b = ((ByteBuffer) v).duplicate();
        byte[] bytes = new byte[b.remaining()];
        b.get(bytes);
        g.writeString(Base64.getEncoder().encodeToString(bytes));
      }
      case STRUCT -> {
        Record r = (Record) v;
        g.writeStartObject();
        for (Types.NestedField f : type.asStructType().fields()) {
          g.writeFieldName(f.name());
          write(g, f.type(), r.getField(f.name()));
        }
        g.writeEndObject();
      }
      case LIST -> {
        g.writeStartArray();
        for (Object e : (List<?>) v) {
          write(g, type.asListType().elementType(), e);
        }
        g.writeEndArray();
      }
      case MAP -> {
        Types.MapType m = type.asMapType();
        if (m.keyType().typeId() == Type.TypeID.STRING) {
          g.writeStartObject();
          for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
            g.writeFieldName(e.getKey().toString());
            write(g, m.valueType(), e.getValue());
          }
          g.writeEndObject();
        } else {
          g.writeStartArray();
          for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
            g.writeStartObject();
            g.writeFieldName("key");
            write(g, m.keyType(), e.getKey());
            g.writeFieldName("value");
            write(g, m.valueType(), e.getValue());
            g.writeEndObject();
          }
          g.writeEndArray();
        }
      }
      case UNKNOWN -> g.writeNull();
      default -> throw new IllegalArgumentException("no encoding for " + type);
    }
  }

  /**
   * shortest is the decimal with the fewest digits that reads back as the
   * same float (single) or double, the nearest of them, laid out as the
   * sidecar (and Go's encoding/json) does: plain from 1e-6 to 1e21, else
   * with an exponent; negative zero as -0.0. Java's own Float.toString
   * keeps a second digit where one suffices (1.4E-45 for 1e-45).
   */
  static String shortest(double v, boolean single) {
    if (v == 0) {
      return Double.doubleToRawLongBits(v) < 0 ? "-0.0" : "0";
    }
    BigDecimal exact = new BigDecimal(v);
    for (int n = 1; ; n++) {
      BigDecimal d = exact.round(new MathContext(n, RoundingMode.HALF_EVEN));
      String s = d.toString();
      boolean same = single ? Float.parseFloat(s) == (float) v : Double.parseDouble(s) == v;
      if (same) {
        d = d.stripTrailingZeros();
        double abs = Math.abs(v);
        boolean plain = single
            ? (float) abs >= 1e-6f && (float) abs < 1e21f
            : abs >= 1e-6 && abs < 1e21;
        return plain ? d.toPlainString() : d.toString();
      }
    }
  }

  private static Instant instant(Object v) {
    if (v instanceof OffsetDateTime o) {
      return o.toInstant();
    }
    return ((LocalDateTime) v).toInstant(ZoneOffset.UTC);
  }

  /** millis is the instant's epoch milliseconds, truncated toward zero. */
  static long millis(Instant i) {
    // Floor first (the nanoseconds count up from the second below), then a
    // step toward zero before 1970 where digits below the millisecond remain.
    long floor = i.getEpochSecond() * 1000 + i.getNano() / 1_000_000;
    if (i.getEpochSecond() < 0 && i.getNano() % 1_000_000 != 0) {
      floor++;
    }
    return floor;
  }

}
