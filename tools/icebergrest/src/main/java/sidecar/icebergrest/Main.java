package sidecar.icebergrest;

import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.hadoop.HadoopFileIO;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.rest.PlanningModeAdapter;
import org.apache.iceberg.rest.RESTCatalogServlet;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * Main serves Iceberg's REST catalog over a local warehouse on 127.0.0.1, on
 * a port the system picks, and prints {@code port N} on stdout once it
 * answers. It runs until stdin closes (the test that started it ends) or it
 * is killed.
 *
 * <pre>java -cp "DIR/*" sidecar.icebergrest.Main WAREHOUSE off|sync|async TASKS_PER_PLAN_TASK [WAREHOUSE off|sync|async TASKS_PER_PLAN_TASK]...</pre>
 *
 * <p>The server is Iceberg's own test server, RESTCatalogAdapter behind
 * RESTCatalogServlet (what Iceberg's RESTCatalogServer runs), over the
 * backend RESTCatalogServer defaults to, a JdbcCatalog on an in-memory SQLite
 * database, with metadata and data files on local disk through HadoopFileIO. The planning mode says whether it plans scans: {@code off}
 * advertises no plan endpoint in /v1/config and refuses them; {@code sync}
 * answers a plan request with the plan (file scan tasks, or plan tasks of at
 * most TASKS_PER_PLAN_TASK file scan tasks each to fetch); {@code async}
 * answers it with a plan id to poll.
 *
 * <p>Each further triple of arguments is another catalog of its own (its
 * own backend, warehouse and planning mode) in the same process, served
 * under the path /catalog-N (N from 1): one JVM where a test needs
 * servers of several planning modes.
 */
public final class Main {
  private Main() {}

  public static void main(String[] args) throws Exception {
    if (args.length == 0 || args.length % 3 != 0) {
      usage();
    }
    ServletContextHandler context = new ServletContextHandler(ServletContextHandler.NO_SESSIONS);
    for (int i = 0; i < args.length; i += 3) {
      String warehouse = args[i];
      String planning = args[i + 1];
      if (!Set.of("off", "sync", "async").contains(planning)) {
        usage();
      }
      int tasksPerPlanTask = Integer.parseInt(args[i + 2]);
      if (tasksPerPlanTask < 1) {
        System.err.println("TASKS_PER_PLAN_TASK must be at least 1, got " + tasksPerPlanTask);
        System.exit(2);
      }
      String path = i == 0 ? "/*" : "/catalog-" + (i / 3) + "/*";
      context.addServlet(new ServletHolder(new Unprefixed(servlet(warehouse, planning, tasksPerPlanTask))), path);
    }

    Server server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    server.setHandler(context);
    server.start();
    System.out.println("port " + connector.getLocalPort());
    System.out.flush();

    // The test that started this process holds stdin open; its end (or a
    // crash) closes it, and the server goes with it.
    InputStream in = System.in;
    while (in.read() >= 0) {
      // nothing is read from stdin
    }
    server.stop();
    System.exit(0);
  }

  private static void usage() {
    System.err.println("usage: Main WAREHOUSE off|sync|async TASKS_PER_PLAN_TASK [WAREHOUSE off|sync|async TASKS_PER_PLAN_TASK]...");
    System.exit(2);
  }

  /** servlet is one catalog's REST servlet over a backend of its own. */
  private static RESTCatalogServlet servlet(String warehouse, String planning, int tasksPerPlanTask) {
    // The backend of Iceberg's RESTCatalogServer: a JdbcCatalog on an
    // in-memory SQLite database, here with one connection (each connection
    // to ":memory:" would be a database of its own, and so is each
    // catalog's).
    JdbcCatalog catalog = new JdbcCatalog();
    catalog.initialize(
        "rest_backend",
        Map.of(
            CatalogProperties.URI, "jdbc:sqlite::memory:",
            CatalogProperties.CLIENT_POOL_SIZE, "1",
            "jdbc.schema-version", "V1",
            CatalogProperties.WAREHOUSE_LOCATION, warehouse,
            CatalogProperties.FILE_IO_IMPL, HadoopFileIO.class.getName()));
    return new RESTCatalogServlet(
        new PlanningModeAdapter(catalog, !planning.equals("off"), planning.equals("async"), tasksPerPlanTask));
  }

  /**
   * Unprefixed hands its servlet each request without the path it is
   * mapped under: RESTCatalogServlet routes by the whole request URI, which
   * must begin with /v1.
   */
  private static final class Unprefixed extends HttpServlet {
    private final HttpServlet inner;

    Unprefixed(HttpServlet inner) {
      this.inner = inner;
    }

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response)
        throws ServletException, IOException {
      String prefix = request.getServletPath();
      inner.service(
          new HttpServletRequestWrapper(request) {
            @Override
            public String getRequestURI() {
              return super.getRequestURI().substring(prefix.length());
            }
          },
          response);
    }
  }
}
