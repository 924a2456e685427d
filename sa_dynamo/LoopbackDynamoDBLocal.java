import com.amazonaws.services.dynamodbv2.local.main.ServerRunner;
import com.amazonaws.services.dynamodbv2.local.server.DynamoDBProxyServer;
import java.io.IOException;
import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * Starts DynamoDB Local with its HTTP connector bound to 127.0.0.1 only (the stock launcher binds every interface).
 *
 * <p>With -Dsa_dynamo.exitWithStdin=true it exits when its standard input reaches end of file: the parent holds
 * the other end of that pipe, and the kernel closes it when the parent dies, however it dies (even SIGKILL).
 */
public class LoopbackDynamoDBLocal {
    public static void main(String[] args) throws Exception {
        if (Boolean.getBoolean("sa_dynamo.exitWithStdin")) {
            Thread watcher = new Thread(LoopbackDynamoDBLocal::exitAtEndOfStdin, "sa_dynamo-parent-watcher");
            watcher.setDaemon(true);
            watcher.start();
        }
        DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
        Field field = DynamoDBProxyServer.class.getDeclaredField("server");
        field.setAccessible(true);
        Server server = (Server) field.get(proxy);
        for (Connector connector : server.getConnectors()) {
            ((ServerConnector) connector).setHost("127.0.0.1");
        }
        try {
            proxy.start();
        } catch (Exception e) {
            // Jetty reports a busy port but would keep the process alive; exit so the caller sees it.
            e.printStackTrace();
            System.exit(1);
        }
        proxy.join();
    }

    private static void exitAtEndOfStdin() {
        try {
            while (System.in.read() != -1) {
                // The parent never writes; anything it does write is ignored.
            }
        } catch (IOException e) {
            // A broken pipe means the same as end of file: the parent is gone.
        }
        System.exit(0);
    }
}
