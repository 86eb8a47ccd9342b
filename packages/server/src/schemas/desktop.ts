import { type Static, Type } from 'typebox';
import { DateTime } from './common.ts';

const Coord = Type.Integer({ minimum: 0, maximum: 16384 });

/** Query strings are not coerced: pixels arrive as digits. */
const Pixels = Type.String({ pattern: '^[0-9]{1,5}$' });

export const ScreenshotQuery = Type.Object(
  { x: Type.Optional(Pixels), y: Type.Optional(Pixels), width: Type.Optional(Pixels), height: Type.Optional(Pixels) },
  { additionalProperties: false, description: 'A region: all four of x, y, width and height, or none for the whole screen' },
);
export type ScreenshotQuery = Static<typeof ScreenshotQuery>;

/** A region of the screen in pixels. */
export interface Region {
  x: number;
  y: number;
  width: number;
  height: number;
}

const Button = Type.Union([Type.Literal('left'), Type.Literal('middle'), Type.Literal('right')]);

/** One input action; `x`/`y` (both or neither) move the pointer there first. */
export const DesktopAction = Type.Union(
  [
    Type.Object({ type: Type.Literal('move'), x: Coord, y: Coord }, { additionalProperties: false }),
    Type.Object(
      {
        type: Type.Literal('click'),
        x: Type.Optional(Coord),
        y: Type.Optional(Coord),
        button: Type.Optional(Button),
        count: Type.Optional(Type.Integer({ minimum: 1, maximum: 3, description: '2 is a double click' })),
      },
      { additionalProperties: false },
    ),
    Type.Object({ type: Type.Literal('press'), button: Type.Optional(Button) }, { additionalProperties: false, description: 'Holds the button down' }),
    Type.Object({ type: Type.Literal('release'), button: Type.Optional(Button) }, { additionalProperties: false }),
    Type.Object(
      { type: Type.Literal('drag'), from: Type.Tuple([Coord, Coord]), to: Type.Tuple([Coord, Coord]) },
      { additionalProperties: false, description: 'Left button from one point to another' },
    ),
    Type.Object(
      {
        type: Type.Literal('scroll'),
        direction: Type.Union([Type.Literal('up'), Type.Literal('down'), Type.Literal('left'), Type.Literal('right')]),
        amount: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Wheel steps, default 1' })),
        x: Type.Optional(Coord),
        y: Type.Optional(Coord),
      },
      { additionalProperties: false },
    ),
    Type.Object({ type: Type.Literal('type'), text: Type.String({ minLength: 1, maxLength: 65536 }) }, { additionalProperties: false, description: 'Types text as key presses' }),
    Type.Object(
      { type: Type.Literal('key'), keys: Type.String({ minLength: 1, maxLength: 256, pattern: '^[A-Za-z0-9_+]+$', description: 'A key or chord in X keysym names: Return, ctrl+c, ctrl+shift+t' }) },
      { additionalProperties: false },
    ),
    Type.Object(
      { type: Type.Literal('open'), target: Type.String({ minLength: 1, maxLength: 8192, description: 'A path in the sandbox or a URL, opened with its default application' }) },
      { additionalProperties: false },
    ),
  ],
  { description: 'An input action on the sandbox desktop' },
);
export type DesktopAction = Static<typeof DesktopAction>;

export const CursorPosition = Type.Object({ x: Type.Integer(), y: Type.Integer() });
export type CursorPosition = Static<typeof CursorPosition>;

export const ScreenSize = Type.Object({ width: Type.Integer(), height: Type.Integer() });
export type ScreenSize = Static<typeof ScreenSize>;

export const LiveViewBody = Type.Object(
  {
    view_only: Type.Optional(Type.Boolean({ description: 'Default false. A view-only link opens an endpoint that refuses keyboard and mouse input' })),
    ttl_s: Type.Optional(Type.Integer({ minimum: 10, maximum: 86400, description: 'How long the link opens new connections; default 900' })),
  },
  { additionalProperties: false },
);
export type LiveViewBody = Static<typeof LiveViewBody>;

export const LiveView = Type.Object({
  url: Type.String({ description: 'noVNC in a browser, with the view token in it: treat it as a secret' }),
  port: Type.Integer({ description: 'The private preview port serving it' }),
  view_token: Type.String({ description: 'Opens this port only (X-Preview-Token or ?preview_token=) until expires_at' }),
  view_only: Type.Boolean(),
  expires_at: DateTime,
});
export type LiveView = Static<typeof LiveView>;
