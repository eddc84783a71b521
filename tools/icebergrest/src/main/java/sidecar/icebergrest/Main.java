package sidecar.icebergrest;

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
 * <pre>java -cp "DIR/*" sidecar.icebergrest.Main WAREHOUSE off|sync|async TASKS_PER_PLAN_TASK</pre>
 *
 * <p>The server is Iceberg's own test server, RESTCatalogAdapter behind
 * RESTCatalogServlet (what Iceberg's RESTCatalogServer runs), over the
 * backend RESTCatalogServer defaults to, a JdbcCatalog on an in-memory SQLite
 * database, with metadata and data files on local disk through HadoopFileIO. The planning mode says whether it plans scans: {@code off}
 * advertises no plan endpoint in /v1/config and refuses them; {@code sync}
 * answers a plan request with the plan (file scan tasks, or plan tasks of at
 * most TASKS_PER_PLAN_TASK file scan tasks each to fetch); {@code async}
 * answers it with a plan id to poll.
 */
public final class Main {
  private Main() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 3 || !Set.of("off", "sync", "async").contains(args[1])) {
      System.err.println("usage: Main WAREHOUSE off|sync|async TASKS_PER_PLAN_TASK");
      System.exit(2);
    }
    String warehouse = args[0];
    String planning = args[1];
    int tasksPerPlanTask = Integer.parseInt(args[2]);
    if (tasksPerPlanTask < 1) {
      System.err.println("TASKS_PER_PLAN_TASK must be at least 1, got " + tasksPerPlanTask);
      System.exit(2);
    }

    // The backend of Iceberg's RESTCatalogServer: a JdbcCatalog on an
    // in-memory SQLite database, here with one connection (each connection
    // to ":memory:" would be a database of its own).
    JdbcCatalog catalog = new JdbcCatalog();
    catalog.initialize(
        "rest_backend",
        Map.of(
            CatalogProperties.URI, "jdbc:sqlite::memory:",
            CatalogProperties.CLIENT_POOL_SIZE, "1",
            "jdbc.schema-version", "V1",
            CatalogProperties.WAREHOUSE_LOCATION, warehouse,
            CatalogProperties.FILE_IO_IMPL, HadoopFileIO.class.getName()));

    PlanningModeAdapter adapter =
        new PlanningModeAdapter(catalog, !planning.equals("off"), planning.equals("async"), tasksPerPlanTask);
    ServletContextHandler context = new ServletContextHandler(ServletContextHandler.NO_SESSIONS);
    context.addServlet(new ServletHolder(new RESTCatalogServlet(adapter)), "/*");

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
}
