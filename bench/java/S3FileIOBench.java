// Iceberg Java's S3FileIO (the shaded copy in sagemaker-feature-store-spark-sdk.jar, package
// smfs.shaded.org.apache.iceberg) deleting or listing objects, for bench/bench_s3.py. Compiled by
// the benchmark with javac against that jar (bench/java_s3fileio.py); never part of icectl.
//
//   java -cp JAR:CLASSES S3FileIOBench delete PATHS_FILE [key=value ...] [--parallel N]
//   java -cp JAR:CLASSES S3FileIOBench list s3://bucket/prefix OUT_FILE [key=value ...]
//
// key=value pairs are S3FileIO properties (s3.endpoint, s3.path-style-access, ...), passed to
// S3FileIO.initialize as they are. `delete` reads one s3:// path a line and calls
// deleteFiles(paths) once (S3FileIO's own batching); with --parallel N it instead cuts the paths
// into chunks of s3.delete.batch-size and calls deleteFiles on each chunk from N threads (one
// DeleteObjects request per call: the shape of Iceberg 1.1+'s deleteFiles, which submits each
// batch to a pool of s3.delete.num-threads threads). `list` iterates listPrefix(prefix) and
// writes each location to OUT_FILE. The operation is timed inside the JVM: JVM start,
// S3FileIO.initialize and a warm-up are excluded (a HEAD that builds the client, then the same
// operation on nothing: deleteFiles of one key that does not exist, or listPrefix of an empty
// prefix, so the code paths are loaded and compiled before the clock starts; 2 requests that the
// proxy counts); one JSON line goes to stdout.
import java.io.BufferedWriter;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import smfs.shaded.org.apache.iceberg.IcebergBuild;
import smfs.shaded.org.apache.iceberg.aws.AwsProperties;
import smfs.shaded.org.apache.iceberg.aws.s3.S3FileIO;
import smfs.shaded.org.apache.iceberg.io.BulkDeletionFailureException;
import smfs.shaded.org.apache.iceberg.io.FileInfo;

public class S3FileIOBench {
  public static void main(String[] args) throws Exception {
    String mode = args[0];
    String target = args[1];
    String out = mode.equals("list") ? args[2] : null;
    Map<String, String> props = new LinkedHashMap<>();
    int parallel = 0;
    for (int i = mode.equals("list") ? 3 : 2; i < args.length; i++) {
      if (args[i].equals("--parallel")) {
        parallel = Integer.parseInt(args[++i]);
      } else {
        int eq = args[i].indexOf('=');
        props.put(args[i].substring(0, eq), args[i].substring(eq + 1));
      }
    }
    S3FileIO io = new S3FileIO();
    io.initialize(props);
    AwsProperties aws = new AwsProperties(props);
    StringBuilder json = new StringBuilder("{\"op\": \"" + mode + "\"");
    long t0;
    long t1;
    if (mode.equals("delete")) {
      List<String> paths = Files.readAllLines(Paths.get(target), StandardCharsets.UTF_8);
      paths.removeIf(String::isEmpty);
      warmUp(io, paths.get(0));
      io.deleteFiles(Collections.singletonList(sibling(paths.get(0), "__warmup__")));
      int failed = 0;
      int batch = aws.s3FileIoDeleteBatchSize();
      t0 = System.nanoTime();
      if (parallel <= 0) {
        try {
          io.deleteFiles(paths);
        } catch (BulkDeletionFailureException e) {
          failed = e.numberFailedObjects();
        }
      } else {
        ExecutorService pool = Executors.newFixedThreadPool(parallel);
        List<Future<Integer>> tasks = new ArrayList<>();
        for (int i = 0; i < paths.size(); i += batch) {
          List<String> chunk = paths.subList(i, Math.min(paths.size(), i + batch));
          tasks.add(pool.submit(() -> {
            try {
              io.deleteFiles(chunk);
              return 0;
            } catch (BulkDeletionFailureException e) {
              return e.numberFailedObjects();
            }
          }));
        }
        for (Future<Integer> task : tasks) {
          failed += task.get();
        }
        pool.shutdown();
      }
      t1 = System.nanoTime();
      json.append(", \"paths\": ").append(paths.size()).append(", \"failed\": ").append(failed)
          .append(", \"parallel\": ").append(parallel);
    } else {
      warmUp(io, target);
      for (FileInfo f : io.listPrefix(target.replaceAll("/*$", "/__warmup__/"))) {
        throw new IllegalStateException("warm-up prefix not empty: " + f.location());
      }
      t0 = System.nanoTime();
      long count = 0;
      try (BufferedWriter w = Files.newBufferedWriter(Paths.get(out), StandardCharsets.UTF_8)) {
        for (FileInfo f : io.listPrefix(target)) {
          w.write(f.location());
          w.write('\n');
          count++;
        }
      }
      t1 = System.nanoTime();
      json.append(", \"listed\": ").append(count);
    }
    io.close();
    json.append(", \"seconds\": ").append((t1 - t0) / 1e9)
        .append(", \"batch_size\": ").append(aws.s3FileIoDeleteBatchSize())
        .append(", \"delete_threads\": ").append(aws.s3FileIoDeleteThreads())
        .append(", \"iceberg_version\": \"").append(IcebergBuild.version()).append('"')
        .append(", \"iceberg_commit\": \"").append(IcebergBuild.gitCommitShortId()).append('"')
        .append(", \"jvm_seconds\": ").append(ManagementFactory.getRuntimeMXBean().getUptime() / 1000.0)
        .append('}');
    System.out.println(json);
    System.exit(0);  // the shaded SDK may leave non-daemon threads behind
  }

  /** Builds the S3 client (made on first use) with one HEAD request, outside the clock. */
  private static void warmUp(S3FileIO io, String path) {
    io.newInputFile(path).exists();
  }

  private static String sibling(String path, String name) {
    return path.substring(0, path.lastIndexOf('/') + 1) + name;
  }
}
