// MaskRef prints reference hashes for schema/mask_test.go using the same
// JDK calls as Debezium 3.6.1's MaskStrings.HashValueConverter
// (MaskStrings.java:144-181): MessageDigest over salt.getBytes(), then
// ObjectOutputStream.writeObject(value) (V1) or value.getBytes() (V2),
// in lowercase hex. Run: javac MaskRef.java && java MaskRef
import java.io.ByteArrayOutputStream;
import java.io.ObjectOutputStream;
import java.security.MessageDigest;

public class MaskRef {
    static String hex(byte[] b) {
        StringBuilder s = new StringBuilder();
        for (byte x : b) {
            s.append(String.format("%02x", x));
        }
        return s.toString();
    }

    static byte[] serialize(String v) throws Exception {
        ByteArrayOutputStream bos = new ByteArrayOutputStream();
        ObjectOutputStream out = new ObjectOutputStream(bos);
        out.writeObject(v);
        return bos.toByteArray();
    }

    static String hash(String alg, String salt, String v, int version) throws Exception {
        MessageDigest md = MessageDigest.getInstance(alg);
        md.update(salt.getBytes());
        return hex(md.digest(version == 1 ? serialize(v) : v.getBytes()));
    }

    public static void main(String[] args) throws Exception {
        System.out.println("default charset " + java.nio.charset.Charset.defaultCharset());
        String[] values = {"", "\u00e9t\u00e9", "\u20ac", "a\u0000b", "\ud83d\ude00x", "\u65e5\u672c\u8a9e", "a".repeat(65535), "a".repeat(70000)};
        for (String v : values) {
            String shown = v.length() > 20 ? "a*" + v.length() : v;
            System.out.printf("%s ser=%s v1=%s v2=%s%n", shown,
                    hex(java.util.Arrays.copyOf(serialize(v), Math.min(24, serialize(v).length))),
                    hash("SHA-256", "salt", v, 1), hash("SHA-256", "salt", v, 2));
        }
        for (String alg : new String[]{"SHA-1", "SHA-224", "SHA-384", "SHA-512", "SHA-512/224", "SHA-512/256", "SHA3-256", "sha256"}) {
            System.out.printf("%s v1=%s v2=%s%n", alg, hash(alg, "salt", "hello", 1), hash(alg, "salt", "hello", 2));
        }
        // A cut inside a surrogate pair, encoded as Avro's Utf8 does.
        System.out.println("cut " + hex("x\ud83d\ude00".substring(0, 2).getBytes("UTF-8")));
    }
}
